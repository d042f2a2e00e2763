// The audit log (docs/reference/tenants.md#audit-log): who did what in the organization, newest first, each entry read as a sentence with when
// and from where. The filters (who, what, about which id, from and until) live in the URL, like the jobs list's;
// pages load on demand. Owners and admins only; members are told so.
import { Button, Group, NativeSelect, Paper, SimpleGrid, Stack, Text, TextInput, Title } from "@mantine/core";
import { useNavigate, useSearch } from "@tanstack/react-router";
import { useEffect, useState, type FormEvent } from "react";
import { canManageTeam, useSession } from "../session";
import { Time } from "../ui/format";
import { ErrorState, Empty, Loading } from "../ui/states";
import { AUDIT_FILTER_KEYS as FILTER_KEYS, type AuditSearch } from "./audit-search";
import { auditSentence, type AuditEntry } from "./audit-sentence";
import type { JobFilter } from "./job-search";
import { RouterAnchor } from "../ui/link";
import { OwnersAndAdminsOnly } from "../ui/page";
import { fromLocalInput, toLocalInput } from "../ui/local-time";
import { useApiKeys } from "../data/api-keys";
import { useAllMembers, useAuditLog } from "../data/audit-log";

/** The kinds of action, as the `action` filter takes them: a prefix names every action it starts. */
export const ACTION_CHOICES = [
  { value: "", label: "Every action" },
  { value: "member.", label: "Members: invites, roles, removals" },
  { value: "member.role_change", label: "Role changes" },
  { value: "invite.", label: "Invites withdrawn or accepted" },
  { value: "api_key.", label: "API keys" },
  { value: "webhook_endpoint.", label: "Webhook endpoints" },
  { value: "schedule.", label: "Schedules" },
  { value: "job.", label: "Jobs cancelled or replayed" },
  { value: "jobs.bulk", label: "Bulk actions on jobs" },
  { value: "queue.", label: "Queues: pauses and limits" },
  { value: "rate_limit.", label: "Rate limits" },
  { value: "waitpoint.", label: "Waitpoints completed or cancelled" },
  { value: "session.", label: "Logins and logouts" },
  { value: "session.login_failed", label: "Failed logins" },
  { value: "password.", label: "Password changes" },
  { value: "sso.", label: "Single sign-on" },
];

export function AuditLogPage() {
  const session = useSession();
  if (!canManageTeam(session.role)) {
    return <OwnersAndAdminsOnly title="Audit log">You are a member of {session.org.name}. Owners and admins can read who did what here.</OwnersAndAdminsOnly>;
  }
  return <AuditLog />;
}

function AuditLog() {
  const session = useSession();
  const search = useSearch({ from: "/app/audit-log" });
  const navigate = useNavigate({ from: "/audit-log" });
  const entries = useAuditLog(search);
  const rows = entries.data?.pages.flatMap((page) => page.items) ?? [];
  const filtered = FILTER_KEYS.some((key) => search[key]);

  return (
    <Stack>
      <Title order={1} size="h2">
        Audit log
      </Title>
      <Text c="dimmed" size="sm">
        Every change made in {session.org.name} by a person or an API key, newest first. Entries cannot be edited or deleted; they are kept for the retention
        period.
      </Text>
      <Filters search={search} onChange={(next) => void navigate({ search: next })} />
      {entries.isPending ? (
        <Loading label="Loading the audit log…" />
      ) : entries.isError ? (
        <ErrorState error={entries.error} retry={() => void entries.refetch()} />
      ) : rows.length === 0 ? (
        <Empty title={filtered ? "No entry matches these filters" : "Nothing recorded yet"}>
          {filtered ? "Change or clear the filters to see more." : "Changes to the team, keys, webhooks, schedules and jobs show up here."}
        </Empty>
      ) : (
        <Stack gap="xs" component="ol" aria-label="Audit log entries" style={{ listStyle: "none", padding: 0, margin: 0 }}>
          {rows.map((entry) => (
            <Entry key={entry.id} entry={entry} />
          ))}
        </Stack>
      )}
      {entries.hasNextPage && (
        <Group justify="center">
          <Button variant="default" loading={entries.isFetchingNextPage} onClick={() => void entries.fetchNextPage()}>
            Show older entries
          </Button>
        </Group>
      )}
    </Stack>
  );
}

type EntryLink =
  | { to: "/jobs/$id"; params: { id: string }; label: string }
  | { to: "/jobs"; search: JobFilter; label: string }
  | { to: "/schedules" | "/webhooks" | "/queues" | "/api-keys" | "/team" | "/sso" | "/waitpoints"; label: string };

/** Where an entry's target is seen now: its job, the jobs a bulk action's filter matches, or the page of its kind. */
function entryLink(entry: AuditEntry): EntryLink | null {
  const target = entry.target;
  if (entry.action === "jobs.bulk") {
    const details = entry.details as { filter?: unknown; job_ids?: unknown } | null;
    // Jobs named one by one: the first of them, each opened from the entry (jobLinks below).
    if (Array.isArray(details?.job_ids)) return null;
    const filter = details?.filter;
    return filter && typeof filter === "object" ? { to: "/jobs", search: filter as JobFilter, label: "the jobs this filter matches now" } : null;
  }
  // A person's own session or password is about them, not something to open.
  if (!target || entry.action.startsWith("session.") || entry.action === "password.change" || entry.action === "sso.login") return null;
  switch (target.type) {
    case "job":
      return target.id ? { to: "/jobs/$id", params: { id: target.id }, label: `job …${target.id.slice(-8)}` } : null;
    case "schedule":
      return entry.action === "schedule.delete" ? null : { to: "/schedules", label: "the schedules" };
    case "webhook_endpoint":
      return entry.action === "webhook_endpoint.delete" ? null : { to: "/webhooks", label: "the webhook endpoints" };
    case "queue":
    case "rate_limit":
      return { to: "/queues", label: "the queues and their limits" };
    case "api_key":
      return { to: "/api-keys", label: "the API keys" };
    case "user":
    case "invite":
      return { to: "/team", label: "the team" };
    case "waitpoint":
      return { to: "/waitpoints", label: "the waitpoints" };
    default:
      return entry.action.startsWith("sso.") ? { to: "/sso", label: "single sign-on" } : null;
  }
}

/** A bulk action on jobs named one by one: a link to each of those its entry keeps, and how many more there were. */
function NamedJobs({ entry }: { entry: AuditEntry }) {
  const details = entry.details as { ids?: unknown; job_ids?: unknown } | null;
  if (entry.action !== "jobs.bulk" || !Array.isArray(details?.job_ids)) return null;
  const ids = details.job_ids.filter((id): id is string => typeof id === "string");
  const more = typeof details.ids === "number" ? details.ids - ids.length : 0;
  return (
    <Text size="xs" data-testid="audit-jobs">
      See{" "}
      {ids.map((id, i) => (
        <span key={id}>
          {i > 0 && ", "}
          <RouterAnchor to="/jobs/$id" params={{ id }} data-testid="audit-link">
            job …{id.slice(-8)}
          </RouterAnchor>
        </span>
      ))}
      {more > 0 && ` and ${more} more`}
    </Text>
  );
}

function Entry({ entry }: { entry: AuditEntry }) {
  const link = entryLink(entry);
  const meta = [entry.ip && `from ${entry.ip}`, entry.request_id && `request ${entry.request_id}`].filter(Boolean).join(" · ");
  return (
    <Paper withBorder p="sm" component="li" data-entry={entry.id} data-action={entry.action}>
      <Stack gap={4}>
        <Text size="sm" style={{ wordBreak: "normal", overflowWrap: "break-word" }} data-testid="audit-sentence">
          {auditSentence(entry)}
        </Text>
        {link && (
          <Text size="xs">
            {link.to === "/jobs/$id" ? (
              <RouterAnchor to="/jobs/$id" params={link.params} data-testid="audit-link">
                See {link.label}
              </RouterAnchor>
            ) : link.to === "/jobs" ? (
              <RouterAnchor to="/jobs" search={link.search} data-testid="audit-link">
                See {link.label}
              </RouterAnchor>
            ) : (
              <RouterAnchor to={link.to} data-testid="audit-link">
                See {link.label}
              </RouterAnchor>
            )}
          </Text>
        )}
        <NamedJobs entry={entry} />
        <Text size="xs" c="dimmed" style={{ overflowWrap: "anywhere" }}>
          <Time iso={entry.time} />
          {meta && ` · ${meta}`}
        </Text>
        {entry.user_agent && (
          <Text size="xs" c="dimmed" truncate="end" title={entry.user_agent}>
            {entry.user_agent}
          </Text>
        )}
      </Stack>
    </Paper>
  );
}

function Filters({ search, onChange }: { search: AuditSearch; onChange(next: AuditSearch): void }) {
  const [draft, setDraft] = useState(search);
  useEffect(() => setDraft(search), [search]);
  // Who can be an actor: the members, and the API keys the caller can see.
  const members = useAllMembers();
  const keys = useApiKeys();
  const actors = [
    { value: "", label: "Anyone" },
    ...(members.data ?? []).map((m) => ({ value: m.id, label: m.email })),
    ...(keys.data ?? []).map((k) => ({ value: k.id, label: `API key “${k.name}”` })),
  ];
  if (draft.actor_id && !actors.some((a) => a.value === draft.actor_id)) actors.push({ value: draft.actor_id, label: `…${draft.actor_id.slice(-8)}` });
  const set = (key: keyof AuditSearch, value: string | undefined) => setDraft({ ...draft, [key]: value || undefined });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onChange(Object.fromEntries(Object.entries(draft).filter(([, value]) => value)));
  };
  return (
    <Paper withBorder p="sm">
      <form onSubmit={submit} aria-label="Filters">
        <SimpleGrid cols={{ base: 1, sm: 2, md: 3 }} spacing="sm">
          <NativeSelect label="Who" data={actors} value={draft.actor_id ?? ""} onChange={(e) => set("actor_id", e.currentTarget.value)} />
          <NativeSelect
            label="What"
            data={
              ACTION_CHOICES.some((c) => c.value === (draft.action ?? ""))
                ? ACTION_CHOICES
                : [...ACTION_CHOICES, { value: draft.action!, label: draft.action! }]
            }
            value={draft.action ?? ""}
            onChange={(e) => set("action", e.currentTarget.value)}
          />
          <TextInput
            label="About (id)"
            description="A member, key, schedule, endpoint or job id"
            value={draft.target_id ?? ""}
            onChange={(e) => set("target_id", e.currentTarget.value.trim())}
          />
          <TextInput
            label="From"
            type="datetime-local"
            value={toLocalInput(draft.after)}
            onChange={(e) => set("after", fromLocalInput(e.currentTarget.value))}
          />
          <TextInput
            label="Until"
            type="datetime-local"
            value={toLocalInput(draft.before)}
            onChange={(e) => set("before", fromLocalInput(e.currentTarget.value))}
          />
        </SimpleGrid>
        <Group mt="sm" gap="xs">
          <Button type="submit">Apply filters</Button>
          <Button variant="default" onClick={() => onChange({})} disabled={!FILTER_KEYS.some((key) => search[key])}>
            Clear
          </Button>
        </Group>
      </form>
    </Paper>
  );
}
