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

/** A page for some roles only as anyone else sees it: its heading, whom it is for (`only`) and who to ask. */
export function OnlyFor({ title, only, children }: { title: string; only: string; children: ReactNode }) {
  return (
    <Stack>
      <Title order={1} size="h2">
        {title}
      </Title>
      <Alert color="gray" title={only}>
        {children}
      </Alert>
    </Stack>
  );
}

/** An owners-and-admins page as a member sees it. */
export function OwnersAndAdminsOnly(props: { title: string; children: ReactNode }) {
  return <OnlyFor only="Owners and admins only" {...props} />;
}
