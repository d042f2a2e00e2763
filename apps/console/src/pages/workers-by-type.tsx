// Capacity per job type (issue 48 #4): a worker runs `concurrency` jobs of each type it serves, so one type can be
// full while the others idle — "3 of 30 slots busy" said nothing of invoice_flow's 3 slots being taken while its jobs
// waited for a worker. Per type: the running workers serving it, their slots for it, and how many of them run this
// organization's jobs of it. Other work (another organization's, Conveyor's own) is known only as a count per worker,
// not by type, so a type it may share says "at least".
import { Badge, Progress, Table, Text, VisuallyHidden } from "@mantine/core";
import { useNarrow } from "../ui/narrow";
import type { ResponseBody } from "@conveyor/client";

/** A worker process in full: one of the deployment's (kind worker) or one of the organization's own (kind protocol). */
export type WorkerRow = Exclude<ResponseBody<"/workers", "get">[number], { kind: "capacity" }>;

export type TypeCapacity = { type: string; workers: number; slots: number; yours: number; others: boolean };

/** Each type served by a running worker, by name: its slots and this organization's busy ones. */
export function capacityByType(workers: readonly WorkerRow[]): TypeCapacity[] {
  const byType = new Map<string, TypeCapacity>();
  for (const worker of workers) {
    if (worker.state !== "running") continue;
    for (const type of worker.types) {
      const row = byType.get(type) ?? { type, workers: 0, slots: 0, yours: 0, others: false };
      row.workers += 1;
      row.slots += worker.concurrency;
      row.yours += worker.jobs.filter((job) => job.type === type).length;
      row.others ||= worker.other_busy_slots > 0;
      byType.set(type, row);
    }
  }
  return [...byType.values()].sort((a, b) => a.type.localeCompare(b.type));
}

export function CapacityByType({ workers }: { workers: readonly WorkerRow[] }) {
  const rows = capacityByType(workers);
  // On a phone the bar's column gives its width to the type's name (a name broken mid-word reads as two).
  const narrow = useNarrow();
  if (rows.length === 0) return null;
  return (
    <Table.ScrollContainer minWidth={0}>
      <Table aria-label="Capacity by job type" verticalSpacing={6} data-testid="capacity-by-type">
        <Table.Thead>
          <Table.Tr>
            <Table.Th scope="col">Job type</Table.Th>
            <Table.Th scope="col">Slots busy</Table.Th>
            {!narrow && (
              <Table.Th scope="col" w="35%">
                <VisuallyHidden>Busy slots as a bar</VisuallyHidden>
              </Table.Th>
            )}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((row) => {
            const full = row.yours >= row.slots;
            return (
              <Table.Tr key={row.type} data-type={row.type} data-full={full}>
                <Table.Td style={{ overflowWrap: "break-word" }}>{row.type}</Table.Td>
                <Table.Td data-testid="type-slots">
                  <Text span size="sm">
                    {row.others && !full ? "at least " : ""}
                    {row.yours} of {row.slots} busy
                  </Text>{" "}
                  {full ? (
                    <Badge color="orange.9" variant="dot" size="sm" miw="max-content">
                      Full: new jobs wait
                    </Badge>
                  ) : (
                    <Text span size="xs" c="dimmed">
                      on {row.workers} {row.workers === 1 ? "worker" : "workers"}
                    </Text>
                  )}
                </Table.Td>
                {!narrow && (
                  <Table.Td>
                    <Progress value={row.slots > 0 ? (100 * row.yours) / row.slots : 0} color={full ? "orange.9" : "blue.8"} size="md" aria-hidden />
                  </Table.Td>
                )}
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
