// What every list page repeats around its rows: the query's loading, error and empty states, and the bordered,
// sideways-scrolling table with its header row and the unseen "Actions" heading over a column of row buttons.
import { Button, Flex, Paper, ScrollArea, Table, VisuallyHidden, type ButtonProps, type TableProps } from "@mantine/core";
import type { ReactNode } from "react";
import { Empty, ErrorState, Loading } from "./states";

/** What QueryList needs of a react-query result (a plain or an infinite query). */
type ListQuery<D> = { isPending: boolean; isError: boolean; error: unknown; data: D | undefined; refetch(): unknown };

/**
 * The query's state: Loading with `loading` as its label, the error with a retry, the `empty` state when the data is
 * an empty list (left out where an empty list still shows its table), else `children(data)`.
 */
export function QueryList<D>(props: { query: ListQuery<D>; loading: string; empty?: { title: string; children?: ReactNode }; children(data: D): ReactNode }) {
  const { query, empty } = props;
  if (query.isPending) return <Loading label={props.loading} />;
  if (query.isError) return <ErrorState error={query.error} retry={() => void query.refetch()} />;
  const data = query.data as D;
  if (empty && Array.isArray(data) && data.length === 0) return <Empty title={empty.title}>{empty.children}</Empty>;
  return <>{props.children(data)}</>;
}

/** A list's table in a bordered box that scrolls sideways on a narrow screen; `minWidth` holds from `sm` up. */
export function ListTable(props: { label: string; minWidth?: number; verticalSpacing?: TableProps["verticalSpacing"]; head: ReactNode; children: ReactNode }) {
  return (
    <Paper withBorder>
      <ScrollArea type="auto">
        <Table
          miw={props.minWidth === undefined ? undefined : { base: 0, sm: props.minWidth }}
          aria-label={props.label}
          verticalSpacing={props.verticalSpacing}
        >
          <Table.Thead>
            <Table.Tr>{props.head}</Table.Tr>
          </Table.Thead>
          <Table.Tbody>{props.children}</Table.Tbody>
        </Table>
      </ScrollArea>
    </Paper>
  );
}

/** The heading of the row buttons' column: named for screen readers, blank on screen. */
export function ActionsHeader({ visibleFrom }: { visibleFrom?: "sm" }) {
  return (
    <Table.Th visibleFrom={visibleFrom}>
      <VisuallyHidden>Actions</VisuallyHidden>
    </Table.Th>
  );
}

/** A row's buttons: side by side on a wide screen, one above the other on a phone. */
export function RowButtons({ justify, children }: { justify?: "flex-end"; children: ReactNode }) {
  return (
    <Flex gap={4} direction={{ base: "column", sm: "row" }} wrap="nowrap" justify={justify}>
      {children}
    </Flex>
  );
}

/** A row's button for what removes something (revoke, delete, remove), which asks first. */
export function DangerButton(props: Omit<ButtonProps, "size" | "color" | "variant"> & { onClick(): void; "aria-label"?: string; children: ReactNode }) {
  return <Button size="xs" color="red.9" variant="outline" {...props} />;
}

/** A row's Edit and Delete (which asks first), each named after the row for screen readers. */
export function EditDeleteButtons(props: { name: string; onEdit(): void; onDelete(): void; justify?: "flex-end" }) {
  return (
    <RowButtons justify={props.justify}>
      <Button size="xs" variant="light" onClick={props.onEdit} aria-label={`Edit ${props.name}`}>
        Edit
      </Button>
      <DangerButton onClick={props.onDelete} aria-label={`Delete ${props.name}`}>
        Delete
      </DangerButton>
    </RowButtons>
  );
}
