// Create or edit a schedule. The cron helper reads the expression as the API does (five fields, croner, the
// schedule's IANA zone) and lists the next five runs while you type; every one of the API's refusals lands at its
// field, in words (schedule-errors.ts). A built-in type's payload starts from its template (the typed client's).
import { Autocomplete, Button, Group, JsonInput, List, Modal, NumberInput, Select, SimpleGrid, Stack, Switch, Text, TextInput } from "@mantine/core";
import { useEffect, useMemo, useState, type FormEvent } from "react";
import { BUILT_IN_JOB_TYPES, BUILT_IN_PAYLOAD_TEMPLATES, type RequestBody, type ResponseBody } from "@conveyor/client";
import { cronInWords } from "../ui/cron-words";
import { FormAlert, FormButtons } from "../ui/form-parts";
import { problems, type FormErrors } from "../ui/form";
import { scheduleErrors } from "./schedule-errors";
import { formatIn, upcomingRuns, zones } from "./schedule-runs";
import { useAction } from "../data/actions";
import { saveSchedule, schedulesRefresh } from "../data/schedules";

export type Schedule = ResponseBody<"/schedules", "get">[number];
type ScheduleBody = RequestBody<"/schedules", "post">;

type Draft = {
  name: string;
  cron: string;
  timezone: string;
  type: string;
  payload: string;
  max_retries: number | string;
  priority: number | string;
  paused: boolean;
  overlap: "allow" | "skip" | "buffer_one";
  catch_up: "none" | "latest" | "all";
};

const FIELDS = ["name", "cron", "timezone", "job.type", "job.payload", "job.max_retries", "job.priority", "paused", "overlap", "catch_up"] as const;
/** docs/reference/time.md#alerts's policies, in words. */
const OVERLAPS = [
  { value: "allow", label: "Run anyway" },
  { value: "skip", label: "Skip the tick" },
  { value: "buffer_one", label: "Run once it ends (one held)" },
];
const CATCH_UPS = [
  { value: "latest", label: "The latest missed run" },
  { value: "none", label: "None" },
  { value: "all", label: "Every missed run (last 24 h)" },
];
/** The payload template of a built-in type, as the form shows it; null for another type. */
export function payloadTemplate(type: string): string | null {
  const template = (BUILT_IN_PAYLOAD_TEMPLATES as Record<string, Record<string, unknown> | undefined>)[type];
  return template ? JSON.stringify(template, null, 2) : null;
}
const BLANK_PAYLOAD = "{\n  \n}";
const EMPTY: Draft = {
  name: "",
  cron: "0 8 * * 1",
  timezone: "UTC",
  type: "send_email",
  payload: payloadTemplate("send_email") ?? BLANK_PAYLOAD,
  max_retries: 0,
  priority: 5,
  paused: false,
  overlap: "allow",
  catch_up: "latest",
};

/** Monospace for what the person types (cron, JSON), not for the field's label and description. */
const MONOSPACE_INPUT = { input: { fontFamily: "var(--mantine-font-family-monospace)" }, error: { whiteSpace: "pre-line" } };

function draftOf(schedule: Schedule | null): Draft {
  if (!schedule) return EMPTY;
  return {
    name: schedule.name,
    cron: schedule.cron,
    timezone: schedule.timezone,
    type: schedule.job.type,
    payload: JSON.stringify(schedule.job.payload, null, 2),
    max_retries: schedule.job.max_retries ?? 0,
    priority: schedule.job.priority ?? 5,
    paused: schedule.paused,
    overlap: schedule.overlap,
    catch_up: schedule.catch_up,
  };
}

export function ScheduleForm({ schedule, onClose }: { schedule: Schedule | "new" | null; onClose(): void }) {
  const existing = schedule && schedule !== "new" ? schedule : null;
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  useEffect(() => {
    setDraft(draftOf(existing));
    setErrors({ fields: {} });
  }, [schedule]);
  const upcoming = useMemo(() => upcomingRuns(draft.cron, draft.timezone), [draft.cron, draft.timezone]);
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => {
    const next = { ...draft, [key]: value };
    // A new type brings its template, unless the person has written a payload of their own.
    if (key === "type") {
      const untouched = [BLANK_PAYLOAD, "", "{}", payloadTemplate(draft.type)].includes(draft.payload.trim() === "" ? "" : draft.payload);
      const template = payloadTemplate(String(value).trim());
      if (untouched && template) next.payload = template;
    }
    setDraft(next);
    // A refusal of the cron is about the expression it was given: a new one starts without it.
    if (key === "cron" && errors.fields.cron)
      setErrors({ ...errors, fields: Object.fromEntries(Object.entries(errors.fields).filter(([field]) => field !== "cron")) });
  };

  const saving = useAction({
    run: (body: ScheduleBody) => saveSchedule({ id: existing?.id, body }),
    done: (_, body) => (existing ? `“${body.name}” saved.` : `“${body.name}” created.`),
    failed: "Could not save the schedule",
    // The API's refusal lands at the fields it names (the cron's own message at the cron field).
    shownAt: (error) => setErrors(scheduleErrors(error, FIELDS)),
    refresh: schedulesRefresh,
    onSuccess: () => onClose(),
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    let payload: Record<string, unknown> | undefined;
    try {
      const parsed: unknown = JSON.parse(draft.payload);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) payload = parsed as Record<string, unknown>;
    } catch {
      payload = undefined;
    }
    // The cron expression is not refused here: the helper's reading (croner) is a preview, and the API's check
    // (five fields, its own wording) is the rule, so its refusal is what lands at the field.
    const local = problems({
      name: draft.name.trim() ? undefined : "is required",
      "job.type": draft.type.trim() ? undefined : "is required",
      "job.payload": payload ? undefined : "must be a JSON object",
    });
    setErrors({ fields: local });
    if (Object.keys(local).length || !payload) return;
    const body = {
      name: draft.name.trim(),
      cron: draft.cron.trim(),
      timezone: draft.timezone,
      paused: draft.paused,
      overlap: draft.overlap,
      catch_up: draft.catch_up,
      job: { type: draft.type.trim(), payload, max_retries: Number(draft.max_retries), priority: Number(draft.priority) },
    };
    saving.mutate(body);
  };

  return (
    <Modal opened={schedule !== null} onClose={onClose} title={existing ? `Edit “${existing.name}”` : "New schedule"} size="lg" centered>
      <form onSubmit={submit} noValidate>
        <Stack>
          <FormAlert message={errors.form} />
          <TextInput label="Name" value={draft.name} onChange={(e) => set("name", e.currentTarget.value)} error={errors.fields.name} required data-autofocus />
          <SimpleGrid cols={{ base: 1, xs: 2 }} verticalSpacing="sm">
            <TextInput
              label="Cron"
              description="minute hour day-of-month month day-of-week"
              inputWrapperOrder={["label", "input", "description", "error"]}
              styles={MONOSPACE_INPUT}
              value={draft.cron}
              onChange={(e) => set("cron", e.currentTarget.value)}
              error={errors.fields.cron}
              required
            />
            <Select
              label="Time zone"
              data={zones}
              value={draft.timezone}
              onChange={(value) => set("timezone", value ?? "UTC")}
              searchable
              allowDeselect={false}
              error={errors.fields.timezone}
              comboboxProps={{ withinPortal: true }}
            />
          </SimpleGrid>
          <div aria-live="polite" data-testid="cron-helper">
            {"runs" in upcoming ? (
              <>
                {cronInWords(draft.cron) && (
                  <Text size="sm" mb={4} data-testid="cron-words">
                    {cronInWords(draft.cron)} ({draft.timezone})
                  </Text>
                )}
                <Text size="sm" fw={600}>
                  Next five runs ({draft.timezone})
                </Text>
                <List size="sm" spacing={2}>
                  {upcoming.runs.map((run) => (
                    <List.Item key={run.getTime()}>
                      <time dateTime={run.toISOString()}>{formatIn(run, draft.timezone)}</time>
                    </List.Item>
                  ))}
                </List>
              </>
            ) : errors.fields.cron ? null : (
              // The preview's own reading; once the API refused the expression, its message at the field says why.
              <Text size="sm" c="dimmed">
                No runs to show: {upcoming.problem.replace(/\.$/, "")}.
              </Text>
            )}
          </div>
          {/* The type on a line of its own: on a phone, three fields side by side cut it to "send_e". */}
          {/* Mantine's combobox, not a <datalist>: while its suggestions are open, Escape closes them and not the dialog
              (the dialog listens for Escape and lets an open combobox keep it); a datalist's Escape reached the dialog. */}
          <Autocomplete
            label="Job type"
            description="A built-in type (suggested as you type) or one your workers' plugins add."
            inputWrapperOrder={["label", "input", "description", "error"]}
            data={[...BUILT_IN_JOB_TYPES]}
            value={draft.type}
            onChange={(value) => set("type", value)}
            error={errors.fields["job.type"]}
            comboboxProps={{ withinPortal: true }}
            required
          />
          <SimpleGrid cols={2} verticalSpacing="sm">
            <NumberInput
              label="Retries"
              min={0}
              max={25}
              value={draft.max_retries}
              onChange={(value) => set("max_retries", value)}
              error={errors.fields["job.max_retries"]}
            />
            <NumberInput
              label="Priority"
              min={1}
              max={10}
              value={draft.priority}
              onChange={(value) => set("priority", value)}
              error={errors.fields["job.priority"]}
            />
          </SimpleGrid>
          {payloadTemplate(draft.type.trim()) && draft.payload !== payloadTemplate(draft.type.trim()) && (
            <Group justify="flex-end" mb={-8}>
              <Button size="compact-xs" variant="subtle" onClick={() => setDraft({ ...draft, payload: payloadTemplate(draft.type.trim())! })}>
                Start again from the {draft.type.trim()} template
              </Button>
            </Group>
          )}
          <JsonInput
            label="Payload"
            description="The job's payload, checked against its type when you save. A built-in type starts from its template."
            autosize
            minRows={4}
            maxRows={14}
            value={draft.payload}
            onChange={(value) => set("payload", value)}
            error={errors.fields["job.payload"]}
            styles={MONOSPACE_INPUT}
          />
          <SimpleGrid cols={{ base: 1, xs: 2 }} verticalSpacing="sm">
            <Select
              label="While the last run is still going"
              data={OVERLAPS}
              value={draft.overlap}
              onChange={(value) => value && set("overlap", value as Draft["overlap"])}
              allowDeselect={false}
              error={errors.fields.overlap}
            />
            <Select
              label="After downtime, run"
              data={CATCH_UPS}
              value={draft.catch_up}
              onChange={(value) => value && set("catch_up", value as Draft["catch_up"])}
              allowDeselect={false}
              error={errors.fields.catch_up}
            />
          </SimpleGrid>
          <Switch label="Paused" checked={draft.paused} onChange={(e) => set("paused", e.currentTarget.checked)} />
          <FormButtons onCancel={onClose} busy={saving.isPending}>
            {existing ? "Save" : "Create schedule"}
          </FormButtons>
        </Stack>
      </form>
    </Modal>
  );
}
