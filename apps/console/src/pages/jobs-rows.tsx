// The jobs table's rows, drawn with plain elements wearing Mantine's own classes (Table, Checkbox, Anchor, Text,
// Badge) instead of Mantine components: the page's first paint waits for 50 of them, and as components each row
// cost ≈ 20 Mantine bodies (props, styles, ids) plus a router link that re-rendered with every change of the
// router's state — React's profiler put 60 % of the page's first render in the rows (docs/performance.md, issue 38).
// The markup is the components' own (the same classes, data attributes and CSS variables), so the table looks and
// reads the same; apps/console/test/jobs.test.ts compares them with the components.
import { RelativeTime, useNow } from "../ui/relative-time";
import { Anchor, Badge, Checkbox, Table, Text } from "@mantine/core";
import { memo, type CSSProperties, type MouseEvent } from "react";
import type { ResponseBody } from "@conveyor/client";
import { formatDuration, jobDuration, shortId, STATUS_COLORS, Time } from "../ui/format";
import { JobProgressBar } from "../ui/job-live";
import { WaitingNote } from "../ui/waiting";

/** A job as the list answers it. */
export type JobRow = ResponseBody<"/jobs", "get">[number];

/** A page of jobs with its selection, as the table and the phone's cards both show it. */
export type JobSelection = {
  rows: JobRow[];
  isChecked(id: string): boolean;
  /** The page's checkbox: every job of the page selected, or some. */
  pageChecked: boolean;
  pageIndeterminate: boolean;
  onTogglePage(): void;
  onToggle(id: string): void;
};

/** What Mantine's <Text size="sm"> sets on its element. */
const TEXT_SM = { "--text-fz": "var(--mantine-font-size-sm)", "--text-lh": "var(--mantine-line-height-sm)" } as CSSProperties;
const ID_LINK_STYLE = { ...TEXT_SM, fontFamily: "var(--mantine-font-family-monospace)" } as CSSProperties;
/** What the Checkbox root's class sets (its size, colours and Mantine's default radius for it). */
const CHECKBOX_STYLE = {
  "--checkbox-size": "calc(1.25rem * var(--mantine-scale))",
  "--checkbox-color": "var(--mantine-primary-color-filled)",
  "--checkbox-icon-color": "var(--mantine-color-white)",
  "--checkbox-radius": "var(--mantine-radius-sm)",
} as CSSProperties;

/** Mantine's Checkbox, as its markup: a native checkbox (its label for screen readers) and the check mark drawn over it. */
export function PlainCheckbox({ label, checked, onChange }: { label: string; checked: boolean; onChange(): void }) {
  return (
    <div className={`${Checkbox.classes.inner} mantine-Checkbox-inner`} style={CHECKBOX_STYLE}>
      <input
        className={`mantine-focus-auto ${Checkbox.classes.input} mantine-Checkbox-input`}
        type="checkbox"
        aria-label={label}
        checked={checked}
        onChange={onChange}
      />
      <svg viewBox="0 0 10 7" fill="none" xmlns="http://www.w3.org/2000/svg" aria-hidden="true" className={`${Checkbox.classes.icon} mantine-Checkbox-icon`}>
        <path
          d="M4 4.586L1.707 2.293A1 1 0 1 0 .293 3.707l3 3a.997.997 0 0 0 1.414 0l5-5A1 1 0 1 0 8.293.293L4 4.586z"
          fill="currentColor"
          fillRule="evenodd"
          clipRule="evenodd"
        />
      </svg>
    </div>
  );
}

/** Mantine's <Badge variant="dot"> of a job's status, as its markup. */
export function PlainStatusBadge({ status }: { status: string }) {
  return (
    <div
      className={`${Badge.classes["root--dot"]} ${Badge.classes.root} mantine-Badge-root`}
      data-variant="dot"
      data-status={status}
      style={{ "--badge-dot-color": `var(--mantine-color-${STATUS_COLORS[status] ?? "gray"}-filled)`, minWidth: "max-content" } as CSSProperties}
    >
      <span className={`${Badge.classes.label} mantine-Badge-label`}>{status}</span>
    </div>
  );
}

/** How a row opens its job: the router's navigation for a plain click, the browser's for the others (new tab…). */
export type OpenJob = { open(id: string): void; preload(id: string): void };

const plainClick = (event: MouseEvent) => !event.defaultPrevented && event.button === 0 && !event.metaKey && !event.ctrlKey && !event.shiftKey && !event.altKey;

/** A link to a job's page, as Mantine's Anchor (size sm) renders it. */
export function JobLink({ id, opener, children }: { id: string; opener: OpenJob; children: string }) {
  return (
    <a
      className={`mantine-focus-auto ${Anchor.classes.root} ${Text.classes.root} mantine-Text-root mantine-Anchor-root`}
      data-size="sm"
      data-underline="hover"
      href={`/jobs/${encodeURIComponent(id)}`}
      style={ID_LINK_STYLE}
      onClick={(event) => {
        if (!plainClick(event)) return;
        event.preventDefault();
        opener.open(id);
      }}
      // The job's page code is fetched on intent, as the router's links do (defaultPreload: "intent").
      onMouseEnter={() => opener.preload(id)}
      onFocus={() => opener.preload(id)}
    >
      {children}
    </a>
  );
}

/** The last attempt's time from start to finish, "—" while unknown (not finished, or never started). */
export function durationText(row: JobRow): string {
  const ms = jobDuration(row);
  return ms === null ? "—" : formatDuration(ms);
}

/**
 * When a job runs, or ran: a pending or running job's run_at, a finished one's end (issue 38 #13: a finished job's
 * run_at is a past time that says nothing).
 */
export function When({ row }: { row: JobRow }) {
  if (row.finished_at && (row.status === "done" || row.status === "failed" || row.status === "cancelled"))
    return (
      <>
        ended <Time iso={row.finished_at} />
      </>
    );
  // Said from now (issue 48 #10: a due job read "runs 5:20:48 AM", a time already past): "runs in 3 min" for a job due
  // later, "due 2 min ago" for one waiting since (its run_at, or its creation without one), "started 4 s ago" running.
  if (row.status === "processing" && row.started_at)
    return (
      <>
        started <RelativeTime iso={row.started_at} />
      </>
    );
  const due = row.run_at ?? row.created_at;
  return <DueWhen iso={due} />;
}

function DueWhen({ iso }: { iso: string }) {
  const later = new Date(iso).getTime() > useNow();
  return (
    <>
      {later ? "runs" : "due"} <RelativeTime iso={iso} />
    </>
  );
}

/** A search's matched path ("payload.invoice.number") broken only after its dots, never inside a word (issue 38 #5). */
export function MatchedPath({ path }: { path: string }) {
  const words = path.replace(/_/g, " ").split(".");
  return (
    <span style={{ overflowWrap: "normal", wordBreak: "keep-all" }}>
      {words.map((word, i) => (
        <span key={i}>
          {i > 0 && (
            <>
              .<wbr />
            </>
          )}
          {word}
        </span>
      ))}
    </span>
  );
}

type RowProps = { row: JobRow; checked: boolean; onToggle(id: string): void; opener: OpenJob };

/** One row of the table; drawn again only when its job, its checkbox or the page's handlers change. */
export const JobTableRow = memo(function JobTableRow({ row, checked, onToggle, opener }: RowProps) {
  const td = `${Table.classes.td} mantine-Table-td`;
  return (
    <tr
      className={`${Table.classes.tr} mantine-Table-tr`}
      data-with-row-border="true"
      data-striped="odd"
      data-hover="true"
      data-job-id={row.id}
      data-status={row.status}
    >
      <td className={td}>
        <PlainCheckbox label={`Select job ${row.id}`} checked={checked} onChange={() => onToggle(row.id)} />
      </td>
      <td className={td}>
        <JobLink id={row.id} opener={opener}>
          {shortId(row.id)}
        </JobLink>
        {/* With a search: what it matched (the id, the short id, or the payload field). */}
        {row.matched && (
          <Text size="xs" c="dimmed" data-testid="row-matched">
            matched <MatchedPath path={row.matched} />
          </Text>
        )}
      </td>
      <td className={td}>
        <p className={`mantine-focus-auto ${Text.classes.root} mantine-Text-root`} data-size="sm" style={TEXT_SM}>
          {row.type}
        </p>
      </td>
      <td className={td}>
        <PlainStatusBadge status={row.status} />
        <JobProgressBar progress={row.progress} status={row.status} compact />
        <WaitingNote job={row} />
        {row.status === "failed" && row.error && (
          <Text size="xs" c="red.9" lineClamp={2} maw={360} title={row.error} data-testid="row-error" style={{ overflowWrap: "anywhere" }}>
            {row.error}
          </Text>
        )}
      </td>
      <td className={td}>{row.priority}</td>
      <td className={td}>
        {row.retries} / {row.max_retries}
      </td>
      <td className={td}>
        <Time iso={row.created_at} />
      </td>
      <td className={td} data-testid="row-when">
        <When row={row} />
      </td>
      <td className={td} data-testid="row-duration">
        {durationText(row)}
      </td>
    </tr>
  );
});
