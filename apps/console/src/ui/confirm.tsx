// A confirmation dialog for what cannot be undone (revoke, delete, remove, bulk actions).
import { Button, Group, Modal, Stack, Text } from "@mantine/core";
import { useState, type ReactNode } from "react";
import { useAction } from "../data/actions";

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

/**
 * An action on one item that asks first (revoke a key, delete a schedule, remove a member…): the item being
 * confirmed (`ask` it, `cancel` the dialog), and `confirm`, which runs it through useAction — a green notification
 * with what `run` returns and the list under `queryKey` refreshed, or a red one titled `failed` with the API's message.
 */
export function useConfirmedAction<T>(options: { queryKey: readonly unknown[]; failed: string; run(item: T): Promise<string> }) {
  const [target, setTarget] = useState<T | null>(null);
  const action = useAction({
    run: (item: T) => options.run(item),
    done: (message) => message,
    failed: options.failed,
    refresh: () => [options.queryKey],
    onSuccess: () => setTarget(null),
  });
  const confirm = () => {
    if (target) action.mutate(target);
  };
  return { target, busy: action.isPending, ask: (item: T) => setTarget(item), cancel: () => setTarget(null), confirm };
}

/** The Confirm of a useConfirmedAction: open while an item is asked about; the children say what happens to it. */
export function ConfirmAction<T>(props: { action: ReturnType<typeof useConfirmedAction<T>>; title: string; confirmLabel: string; children: ReactNode }) {
  const { action } = props;
  return (
    <Confirm
      opened={action.target !== null}
      title={props.title}
      confirmLabel={props.confirmLabel}
      loading={action.busy}
      onConfirm={() => void action.confirm()}
      onClose={action.cancel}
    >
      {props.children}
    </Confirm>
  );
}
