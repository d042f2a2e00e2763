// The jobs list's table: its header and its rows. One definition for the page (jobs.tsx) and for the first rows the
// API writes into the page's HTML before the console's script has run (first-page-server.tsx).
import { Checkbox, Paper, ScrollArea, Table, UnstyledButton } from "@mantine/core";
import { JobTableRow, type JobSelection, type OpenJob } from "./jobs-rows";

type Props = JobSelection & {
  order: "oldest" | undefined;
  onOrder(): void;
  opener: OpenJob;
};

export function JobsTable({ rows, isChecked, pageChecked, pageIndeterminate, onTogglePage, onToggle, order, onOrder, opener }: Props) {
  return (
    // The class: the API's drawing of the page hides this table on a phone (shell.css), where the page shows cards.
    <Paper withBorder className="jobs-table">
      <ScrollArea type="auto">
        <Table striped highlightOnHover miw={760} aria-label="Jobs" data-testid="jobs-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th w={40}>
                <Checkbox aria-label="Select every job on this page" checked={pageChecked} indeterminate={pageIndeterminate} onChange={onTogglePage} />
              </Table.Th>
              <Table.Th>Job</Table.Th>
              <Table.Th>Type</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Priority</Table.Th>
              <Table.Th>Retries</Table.Th>
              <Table.Th aria-sort={order === "oldest" ? "ascending" : "descending"}>
                <UnstyledButton
                  fw={700}
                  fz="sm"
                  onClick={onOrder}
                  title={order === "oldest" ? "Oldest first: show the newest first" : "Newest first: show the oldest first"}
                >
                  Created {order === "oldest" ? "↑" : "↓"}
                </UnstyledButton>
              </Table.Th>
              <Table.Th>Runs at / ended</Table.Th>
              <Table.Th>Duration</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((row) => (
              <JobTableRow key={row.id} row={row} checked={isChecked(row.id)} onToggle={onToggle} opener={opener} />
            ))}
          </Table.Tbody>
        </Table>
      </ScrollArea>
    </Paper>
  );
}
