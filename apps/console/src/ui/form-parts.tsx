// What the console's forms repeat: the error about the whole form above its fields, and the foot of a dialog's form.
import { Alert, Button, Group } from "@mantine/core";
import type { ReactNode } from "react";

/** The form's own error (not one field's), when there is one. */
export function FormAlert({ message }: { message?: string }) {
  return message ? (
    <Alert color="red" role="alert">
      {message}
    </Alert>
  ) : null;
}

/** Cancel, then the submit button, which spins while the request is out. */
export function FormButtons({ onCancel, busy, children }: { onCancel(): void; busy: boolean; children: ReactNode }) {
  return (
    <Group justify="flex-end">
      <Button variant="default" onClick={onCancel}>
        Cancel
      </Button>
      <Button type="submit" loading={busy}>
        {children}
      </Button>
    </Group>
  );
}
