// A job id this organization has no job of: said plainly, and where the person has it elsewhere, a way there.
import { Alert, Button, Group, Stack, Text, Title } from "@mantine/core";
import { useJobElsewhere, useLookIn } from "../data/job-detail";
import { useSession } from "../session";
import { RouterAnchor } from "../ui/link";

/**
 * A job id this organization has no job of (issue 23 #9): said plainly, with no "try again" (asking again finds
 * nothing more), and — for a person in several organizations — a way to look in the one that has it.
 */
export function JobNotFound({ id }: { id: string }) {
  const session = useSession();
  // Offered only where the job is (issue 48 #10): asked of the API, which looks in the person's other organizations.
  const elsewhere = useJobElsewhere(id, { enabled: session.orgs.length > 1 });
  const others = elsewhere.data ?? [];
  const lookIn = useLookIn();
  return (
    <Stack>
      <RouterAnchor to="/jobs" size="sm">
        ← All jobs
      </RouterAnchor>
      <Title order={1} size="h2">
        Job not found
      </Title>
      <Alert color="gray" role="alert" title={`Not in ${session.org.name}`}>
        <Stack gap="xs">
          {/* Prose breaks between words; only the id, one long word, may break anywhere (and only where it must). */}
          <Text size="sm" style={{ wordBreak: "normal" }} data-testid="missing-job-text">
            A job with the id “<span style={{ overflowWrap: "anywhere" }}>{id}</span>” was not found in {session.org.name}: the address may be mistyped, or the
            job was deleted after its retention period.
          </Text>
          {others.length > 0 && (
            <>
              <Text size="sm">It belongs to another of your organizations:</Text>
              <Group gap="xs">
                {others.map((org) => (
                  <Button
                    key={org.id}
                    size="xs"
                    variant="default"
                    loading={lookIn.isPending && lookIn.variables === org.id}
                    onClick={() => lookIn.mutate(org.id)}
                  >
                    Look in {org.name}
                  </Button>
                ))}
              </Group>
            </>
          )}
        </Stack>
      </Alert>
    </Stack>
  );
}
