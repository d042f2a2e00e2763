// The organization's named rate limits (docs/reference/flow-control.md#flow-control): each with its limit and what is
// used now; owners and admins create, change and delete them.
import { Button, Group, Modal, NumberInput, Select, Stack, Table, Text, TextInput } from "@mantine/core";
import type { UseQueryResult } from "@tanstack/react-query";
import { useEffect, useState, type FormEvent } from "react";
import { RATE_LIMIT_MAX, RATE_LIMIT_NAME_PATTERN, RATE_LIMIT_PERIODS } from "@conveyor/client";
import { useAction } from "../data/actions";
import { deleteRateLimit, putRateLimit, rateLimitsKey, rateLimitsRefresh, type RateLimit } from "../data/queues";
import { ConfirmAction, useConfirmedAction } from "../ui/confirm";
import { FormButtons } from "../ui/form-parts";
import { formErrors, problems, type FormErrors } from "../ui/form";
import { ActionsHeader, EditDeleteButtons, ListTable, QueryList } from "../ui/list";
import { Heading } from "../ui/page";

type Period = (typeof RATE_LIMIT_PERIODS)[number];

export const per = (period: string) => (period === "second" ? "a second" : period === "minute" ? "a minute" : "an hour");

export function RateLimits({ manager, limits }: { manager: boolean; limits: UseQueryResult<RateLimit[]> }) {
  const [editing, setEditing] = useState<RateLimit | "new" | null>(null);
  const deleting = useConfirmedAction<RateLimit>({
    queryKey: rateLimitsKey,
    failed: "Could not delete the rate limit",
    run: async (limit) => {
      await deleteRateLimit(limit.name);
      return `Rate limit “${limit.name}” deleted.`;
    },
  });
  return (
    <Stack component="section" aria-labelledby="rate-limits-title" mt="md">
      <Heading section id="rate-limits-title" action={manager && <Button onClick={() => setEditing("new")}>New rate limit</Button>}>
        Rate limits
      </Heading>
      <Text c="dimmed" size="sm">
        A job that names a rate limit in <code>rate_limit</code> (or whose queue names one) starts at most that often, across every worker.
      </Text>
      <QueryList
        query={limits}
        loading="Loading rate limits…"
        empty={{
          title: "No rate limits yet",
          children: manager ? "Create one for each provider account your jobs share." : "Owners and admins can create them.",
        }}
      >
        {(rows) => (
          <ListTable
            label="Rate limits"
            head={
              <>
                <Table.Th>Name</Table.Th>
                <Table.Th visibleFrom="sm">Limit</Table.Th>
                <Table.Th ta="right" visibleFrom="sm">
                  Used now
                </Table.Th>
                {manager && <ActionsHeader visibleFrom="sm" />}
              </>
            }
          >
            {rows.map((limit) => (
              <Table.Tr key={limit.name} data-rate-limit={limit.name}>
                <Table.Td>
                  <Text ff="monospace" size="sm" style={{ overflowWrap: "anywhere" }}>
                    {limit.name}
                  </Text>
                  <Text size="xs" c="dimmed" hiddenFrom="sm">
                    {limit.limit} {per(limit.period)} · {limit.used} used now
                  </Text>
                </Table.Td>
                <Table.Td visibleFrom="sm">
                  {limit.limit} {per(limit.period)}
                </Table.Td>
                <Table.Td ta="right" visibleFrom="sm">
                  {limit.used}
                </Table.Td>
                {manager && (
                  <Table.Td>
                    <EditDeleteButtons justify="flex-end" name={limit.name} onEdit={() => setEditing(limit)} onDelete={() => deleting.ask(limit)} />
                  </Table.Td>
                )}
              </Table.Tr>
            ))}
          </ListTable>
        )}
      </QueryList>
      {manager && <RateLimitForm limit={editing} onClose={() => setEditing(null)} />}
      <ConfirmAction action={deleting} title="Delete this rate limit?" confirmLabel="Delete">
        Jobs and queues naming “{deleting.target?.name}” start without it from then on.
      </ConfirmAction>
    </Stack>
  );
}

function RateLimitForm({ limit, onClose }: { limit: RateLimit | "new" | null; onClose(): void }) {
  const existing = limit && limit !== "new" ? limit : null;
  const [name, setName] = useState("");
  const [count, setCount] = useState<string | number>(10);
  const [period, setPeriod] = useState<Period>("second");
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const saving = useAction({
    run: putRateLimit,
    done: (_, { name, body }) => `Rate limit “${name}” saved: ${body.limit} ${per(body.period)}.`,
    failed: "Could not save the rate limit",
    shownAt: (error) => setErrors(formErrors(error, ["name", "limit", "period"])),
    refresh: rateLimitsRefresh,
    onSuccess: () => onClose(),
  });
  useEffect(() => {
    setName(existing?.name ?? "");
    setCount(existing?.limit ?? 10);
    setPeriod((existing?.period as Period | undefined) ?? "second");
    setErrors({ fields: {} });
  }, [limit]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const trimmed = name.trim();
    const value = Number(count);
    const found = problems({
      name: !trimmed ? "is required" : RATE_LIMIT_NAME_PATTERN.test(trimmed) ? undefined : "must be 1 to 100 of a-z, 0-9, _ . : -",
      limit: count === "" || !Number.isInteger(value) || value < 1 || value > RATE_LIMIT_MAX ? `must be a whole number from 1 to ${RATE_LIMIT_MAX}` : undefined,
    });
    if (Object.keys(found).length) return setErrors({ fields: found });
    saving.mutate({ name: trimmed, body: { limit: value, period } });
  };

  return (
    <Modal opened={limit !== null} onClose={onClose} title={existing ? `Edit ${existing.name}` : "New rate limit"} centered>
      <form onSubmit={submit} noValidate>
        <Stack>
          <TextInput
            label="Name"
            description="What jobs name in rate_limit, e.g. sms-provider."
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            readOnly={existing !== null}
            error={errors.fields.name}
            required
            data-autofocus={existing ? undefined : true}
          />
          <Group grow align="flex-start">
            <NumberInput
              label="Starts"
              value={count}
              onChange={setCount}
              min={1}
              max={RATE_LIMIT_MAX}
              allowDecimal={false}
              allowNegative={false}
              clampBehavior="none"
              error={errors.fields.limit}
              required
              data-autofocus={existing ? true : undefined}
            />
            <Select
              label="Per"
              data={RATE_LIMIT_PERIODS.map((p) => ({ value: p, label: p }))}
              value={period}
              onChange={(value) => value && setPeriod(value as Period)}
              allowDeselect={false}
              error={errors.fields.period}
              required
            />
          </Group>
          {errors.form && (
            <Text c="var(--mantine-color-error)" size="sm" role="alert">
              {errors.form}
            </Text>
          )}
          <FormButtons onCancel={onClose} busy={saving.isPending}>
            Save rate limit
          </FormButtons>
        </Stack>
      </form>
    </Modal>
  );
}
