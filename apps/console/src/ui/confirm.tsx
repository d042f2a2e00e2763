// A confirmation dialog for what cannot be undone (revoke, delete, remove, bulk actions).
import { Button, Group, Modal, Stack, Text } from "@mantine/core";
import { useWindowEvent } from "@mantine/hooks";
import { useState, type ReactNode } from "react";
import { useAction } from "../data/actions";

/**
 * The focus starts on the safe button ("Keep it"), so Enter, Enter never does what the dialog asks about (issue 48
 * #6); the action is a Tab away. With `confirmLabel` null there is nothing to do (nothing matched): one "Close".
 */
export function Confirm(props: {
  opened: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string | null;
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
          <Button variant="default" onClick={props.onClose} data-autofocus>
            {props.confirmLabel === null ? "Close" : "Keep it"}
          </Button>
          {props.confirmLabel !== null && (
            <Button color={props.color ?? "red.9"} loading={props.loading} onClick={props.onConfirm}>
              {props.confirmLabel}
            </Button>
          )}
        </Group>
      </Stack>
    </Modal>
  );
}

/**
 * Escape for a drawer or dialog that opens dialogs of its own: Mantine closes every open one on the same key, so one
 * Escape in "Redeliver failed…" also closed the deliveries drawer and lost its filters (issue 48 #5). Give the outer
 * one `closeOnEscape={false}` and this: it closes only when no other dialog is open over it (the inner one, closed
 * by the same key, is still on the page while the key is handled).
 */
export function useEscapeWhenTopmost(opened: boolean, onClose: () => void): void {
  useWindowEvent("keydown", (event) => {
    if (event.key !== "Escape" || !opened || event.isComposing) return;
    if (document.querySelectorAll('[role="dialog"]').length > 1) return;
    onClose();
  });
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
