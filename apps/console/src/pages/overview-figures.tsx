// The overview's charts' figures: the stats' shapes, the time of a bucket, the jobs list's filter for a bucket, and
// each chart's figures as a table (what a keyboard or a screen reader opens a bar's jobs with).
import { Button, ScrollArea, Stack, Table } from "@mantine/core";
import { useId, useState } from "react";
import type { ResponseBody } from "@conveyor/client";
import { RouterAnchor } from "../ui/link";
import type { JobFilter } from "./job-search";

export type Stats = ResponseBody<"/jobs/stats", "get">;
export type Bucket = Stats["buckets"][number];
export type Window = "hour" | "day";

export const clock = (iso: string, window: Window) =>
  new Date(iso).toLocaleTimeString(
    undefined,
    window === "hour" ? { hour: "2-digit", minute: "2-digit" } : { hour: "2-digit", minute: "2-digit", weekday: "short" },
  );

/**
 * The jobs list's filter for a bucket of the chart, by the time the bucket counts its jobs at: created in it (the
 * line, the type chart), or finished in it (a bar of done, failed or cancelled jobs: a job finished at 04:57 may
 * have been created an hour before) — and of the status or type the segment shows.
 */
export function bucketSearch(start: string, seconds: number, extra: JobFilter, by: "created" | "finished" = "created"): JobFilter {
  const end = new Date(Date.parse(start) + seconds * 1000).toISOString();
  return by === "finished" ? { ...extra, finished_after: start, finished_before: end } : { ...extra, created_after: start, created_before: end };
}

/**
 * A chart's figures as a table, behind a button: what a keyboard or a screen reader uses to open a bar's jobs (the
 * bars themselves take mouse clicks only). Each count links to the jobs it counts; periods with none are left out.
 */
export function FiguresTable(props: {
  caption: string;
  stats: Stats;
  window: Window;
  columns: { label: string; count(bucket: Bucket): number; search: JobFilter; by?: "created" | "finished" }[];
}) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const { stats, columns } = props;
  const rows = stats.buckets.filter((bucket) => columns.some((column) => column.count(bucket) > 0));
  return (
    <Stack gap="xs" mt="xs" align="flex-start">
      <Button variant="subtle" size="compact-sm" aria-expanded={open} aria-controls={id} onClick={() => setOpen(!open)}>
        {open ? "Hide the figures" : "Show the figures as a table"}
      </Button>
      {open && (
        <ScrollArea type="auto" w="100%" id={id}>
          <Table striped withTableBorder stickyHeader>
            <Table.Caption>{props.caption}, periods with jobs only</Table.Caption>
            <Table.Thead>
              <Table.Tr>
                <Table.Th scope="col">Period from</Table.Th>
                {columns.map((column) => (
                  <Table.Th scope="col" key={column.label}>
                    {column.label}
                  </Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((bucket) => (
                <Table.Tr key={bucket.start}>
                  <Table.Th scope="row" fw={400}>
                    {clock(bucket.start, props.window)}
                  </Table.Th>
                  {columns.map((column) => {
                    const count = column.count(bucket);
                    return (
                      <Table.Td key={column.label}>
                        {count > 0 ? (
                          <RouterAnchor
                            to="/jobs"
                            search={bucketSearch(bucket.start, stats.bucket_seconds, column.search, column.by)}
                            aria-label={`${count} ${column.label.toLowerCase()} from ${clock(bucket.start, props.window)}`}
                          >
                            {count.toLocaleString()}
                          </RouterAnchor>
                        ) : (
                          0
                        )}
                      </Table.Td>
                    );
                  })}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </ScrollArea>
      )}
    </Stack>
  );
}
