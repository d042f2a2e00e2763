// A secret (API key, webhook secret, invite link) shown once, with a copy button.
import { Alert, Button, Code, CopyButton, Group, Stack, Text, VisuallyHidden } from "@mantine/core";

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
