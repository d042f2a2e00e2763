// Loading, error and empty states, the same on every page.
import { Alert, Button, Center, Group, Loader, Stack, Text } from "@mantine/core";
import type { ReactNode } from "react";
import { ApiError } from "../api";

export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <Center py="xl" role="status" aria-live="polite">
      <Group gap="sm">
        <Loader size="sm" aria-hidden />
        <Text c="dimmed">{label}</Text>
      </Group>
    </Center>
  );
}

/** The API's own message when it has one, else what went wrong; with a retry when one can help. */
export function ErrorState({ error, retry, title = "Something went wrong" }: { error: unknown; retry?: () => void; title?: string }) {
  const message = error instanceof Error ? error.message : "An unexpected error happened.";
  const forbidden = error instanceof ApiError && error.status === 403;
  return (
    <Alert color="red" title={forbidden ? "Not allowed" : title} role="alert">
      <Stack gap="xs">
        <Text size="sm" c="var(--mantine-color-text)">
          {message}
        </Text>
        {retry && !forbidden && (
          <Group>
            <Button size="xs" variant="outline" color="red.9" onClick={retry}>
              Try again
            </Button>
          </Group>
        )}
      </Stack>
    </Alert>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <Center py="xl">
      <Stack gap={4} align="center" maw={420} ta="center">
        <Text fw={600}>{title}</Text>
        {children && (
          <Text c="dimmed" size="sm" component="div">
            {children}
          </Text>
        )}
      </Stack>
    </Center>
  );
}
