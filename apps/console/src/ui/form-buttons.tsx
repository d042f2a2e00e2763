// The foot of every dialog's form: Cancel, then the submit button, which spins while the request is out.
import { Button, Group } from "@mantine/core";
import type { ReactNode } from "react";

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
