// A secret (API key, webhook secret, invite link) shown once, with a copy button.
import { Alert, Button, Code, CopyButton, Group, Modal, Stack, Text, VisuallyHidden } from "@mantine/core";
import type { FormEvent, ReactNode } from "react";
import { FormButtons } from "./form-parts";

export function ShownOnce({ label, value, note }: { label: string; value: string; note: string }) {
  return (
    // Mantine's light Alert with a shade ("yellow.9") paints the background in that shade and hides the title in it:
    // the plain colour's tint, with the title in the body colour, reads at 4.5:1 or better.
    <Alert color="yellow" title={label} styles={{ title: { color: "var(--mantine-color-text)" } }}>
      <Stack gap="xs">
        <Text size="sm">{note}</Text>
        <Group gap="xs" wrap="nowrap" align="flex-start">
          <Code block style={{ flex: 1, wordBreak: "break-all", whiteSpace: "pre-wrap" }} data-testid="secret-value">
            {value}
          </Code>
          <CopyValue value={value} what={asNoun(label)} />
        </Group>
      </Stack>
    </Alert>
  );
}

/** "Invite link" → "invite link", but "API key" stays. */
const asNoun = (label: string) => (/^[A-Z][a-z]/.test(label) ? label[0]!.toLowerCase() + label.slice(1) : label);

/** A copy button named after what it copies ("Copy API key", then "Copied API key"): the visible word starts its name. */
export function CopyValue({ value, what }: { value: string; what: string }) {
  return (
    <CopyButton value={value} timeout={2000}>
      {({ copied, copy }) => (
        <Button variant="default" size="xs" onClick={copy} style={{ flexShrink: 0 }}>
          {copied ? "Copied" : "Copy"}
          <VisuallyHidden> {what}</VisuallyHidden>
        </Button>
      )}
    </CopyButton>
  );
}

export type ShownOnceValue = { title: string; label: string; value: string; note: string };

/**
 * A modal that creates something the API shows only once (an API key, a webhook secret, an invite link): the form
 * (its fields are the children), then, once created, the value with its copy button and Done. The page keeps the
 * form's state, its checks and its request; `onClose` resets them.
 */
export function ShownOnceModal(props: {
  opened: boolean;
  onClose(): void;
  title: string;
  /** Set once created: the form gives way to the value. */
  shown: ShownOnceValue | null;
  /** An error about the whole form (not one field). */
  formError?: string;
  busy: boolean;
  submitLabel: string;
  onSubmit(event: FormEvent): void | Promise<void>;
  children: ReactNode;
}) {
  const { shown, onClose } = props;
  return (
    <Modal opened={props.opened} onClose={onClose} title={shown ? shown.title : props.title} centered>
      {shown ? (
        <Stack>
          <ShownOnce label={shown.label} value={shown.value} note={shown.note} />
          <Group justify="flex-end">
            <Button onClick={onClose}>Done</Button>
          </Group>
        </Stack>
      ) : (
        <form onSubmit={(event) => void props.onSubmit(event)} noValidate>
          <Stack>
            {props.formError && (
              <Text c="red" size="sm" role="alert">
                {props.formError}
              </Text>
            )}
            {props.children}
            <FormButtons onCancel={onClose} busy={props.busy}>
              {props.submitLabel}
            </FormButtons>
          </Stack>
        </form>
      )}
    </Modal>
  );
}
