// A page's or a section's heading with its main button beside it, and what a member sees on an owners' page.
import { Alert, Group, Stack, Title } from "@mantine/core";
import type { ReactNode } from "react";

/** The heading (a page's h1, or a section's h2 with `section`) and, at the other end of the line, its button. */
export function Heading(props: { children: ReactNode; action?: ReactNode; section?: boolean; id?: string; align?: "end" }) {
  return (
    <Group justify="space-between" align={props.align}>
      <Title order={props.section ? 2 : 1} size={props.section ? "h3" : "h2"} id={props.id}>
        {props.children}
      </Title>
      {props.action}
    </Group>
  );
}

/** An owners-and-admins page as a member sees it: its heading and who to ask. */
export function OwnersAndAdminsOnly({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Stack>
      <Title order={1} size="h2">
        {title}
      </Title>
      <Alert color="gray" title="Owners and admins only">
        {children}
      </Alert>
    </Stack>
  );
}
