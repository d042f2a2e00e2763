// A confirmation dialog for what cannot be undone (revoke, delete, remove, bulk actions).
import { Button, Group, Modal, Stack, Text } from "@mantine/core";
import type { ReactNode } from "react";

export function Confirm(props: {
  opened: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  color?: string;
  loading?: boolean;
  onConfirm(): void;
  onClose(): void;
}) {
  return (
    <Modal opened={props.opened} onClose={props.onClose} title={props.title} centered>
      <Stack>
        <Text size="sm" component="div">
          {props.children}
        </Text>
        <Group justify="flex-end">
          <Button variant="default" onClick={props.onClose}>
            Keep it
          </Button>
          <Button color={props.color ?? "red.9"} loading={props.loading} onClick={props.onConfirm} data-autofocus>
            {props.confirmLabel}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
