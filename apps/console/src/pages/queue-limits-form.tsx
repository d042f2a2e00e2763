// A queue's limits, in a dialog: the most of its jobs running at once (empty: no cap) and one of the organization's
// rate limits (or none).
import { Modal, NumberInput, Select, Stack, Text } from "@mantine/core";
import { useEffect, useState, type FormEvent } from "react";
import { QUEUE_CONCURRENCY_LIMIT_MAX } from "@conveyor/client";
import { useAction } from "../data/actions";
import { patchQueue, queuesRefresh, type Queue, type RateLimit } from "../data/queues";
import { FormButtons } from "../ui/form-parts";
import { formErrors, problems, type FormErrors } from "../ui/form";
import { per } from "./rate-limits";

/** The queue's cap (empty: none) and rate limit (one of the organization's, or none). */
export function QueueLimitsForm({ queue, rateLimits, onClose }: { queue: Queue | null; rateLimits: RateLimit[]; onClose(): void }) {
  const [cap, setCap] = useState<string | number>("");
  const [rateLimit, setRateLimit] = useState<string | null>(null);
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const saving = useAction({
    run: patchQueue,
    done: (_, { type }) => `Limits of ${type} saved.`,
    failed: "Could not save the limits",
    shownAt: (error) => setErrors(formErrors(error, ["concurrency_limit", "rate_limit"])),
    refresh: queuesRefresh,
    onSuccess: () => onClose(),
  });
  useEffect(() => {
    setCap(queue?.concurrency_limit ?? "");
    setRateLimit(queue?.rate_limit ?? null);
    setErrors({ fields: {} });
  }, [queue]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!queue) return;
    const capValue = cap === "" ? null : Number(cap);
    const found = problems({
      concurrency_limit:
        capValue !== null && (!Number.isInteger(capValue) || capValue < 1 || capValue > QUEUE_CONCURRENCY_LIMIT_MAX)
          ? `must be a whole number from 1 to ${QUEUE_CONCURRENCY_LIMIT_MAX}, or empty`
          : undefined,
    });
    if (Object.keys(found).length) return setErrors({ fields: found });
    saving.mutate({ type: queue.type, body: { concurrency_limit: capValue, rate_limit: rateLimit } });
  };

  return (
    <Modal opened={queue !== null} onClose={onClose} title={queue ? `Limits of ${queue.type}` : "Limits"} centered>
      <form onSubmit={submit} noValidate>
        <Stack>
          <NumberInput
            label="Most running at once"
            description="Your jobs of this type running at the same time. Empty: no cap of your own."
            value={cap}
            onChange={setCap}
            min={1}
            max={QUEUE_CONCURRENCY_LIMIT_MAX}
            allowDecimal={false}
            allowNegative={false}
            clampBehavior="none"
            error={errors.fields.concurrency_limit}
            data-autofocus
          />
          <Select
            label="Rate limit"
            description={rateLimits.length ? "Every job of this type starts under it." : "Define a rate limit below first."}
            data={[
              { value: "", label: "None" },
              ...rateLimits.map((limit) => ({ value: limit.name, label: `${limit.name} (${limit.limit} ${per(limit.period)})` })),
            ]}
            value={rateLimit ?? ""}
            onChange={(value) => setRateLimit(value ? value : null)}
            allowDeselect={false}
            error={errors.fields.rate_limit}
          />
          {errors.form && (
            <Text c="var(--mantine-color-error)" size="sm" role="alert">
              {errors.form}
            </Text>
          )}
          <FormButtons onCancel={onClose} busy={saving.isPending}>
            Save limits
          </FormButtons>
        </Stack>
      </form>
    </Modal>
  );
}
