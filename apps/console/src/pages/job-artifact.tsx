// A job's artifact (a PDF or a JPEG), fetched through the client with the session cookie and shown from a blob:
// URL: an image inline, a PDF in a frame (the page's policy allows blob: frames only), both downloadable.
import { Anchor, Group, Image, Text } from "@mantine/core";
import { useEffect, useMemo } from "react";
import { ErrorState, Loading } from "../ui/states";
import { useJobArtifact } from "../data/job-detail";

export function Artifact({ jobId, type }: { jobId: string; type: string }) {
  const artifact = useJobArtifact(jobId, `${jobId}.${type === "generate_pdf" ? "pdf" : "jpg"}`);
  const url = useMemo(() => (artifact.data ? URL.createObjectURL(artifact.data.blob) : null), [artifact.data]);
  useEffect(() => () => void (url && URL.revokeObjectURL(url)), [url]);

  if (artifact.isPending) return <Loading label="Loading the artifact…" />;
  if (artifact.isError) return <ErrorState error={artifact.error} retry={() => void artifact.refetch()} title="Could not load the artifact" />;
  if (!url) return null;
  const pdf = artifact.data.blob.type === "application/pdf";
  return (
    <>
      {pdf ? (
        <iframe src={url} title="PDF preview" style={{ width: "100%", height: 480, border: "1px solid var(--mantine-color-gray-3)", borderRadius: 8 }} />
      ) : (
        <Image src={url} alt="The compressed image" maw={480} radius="sm" />
      )}
      <Group mt="sm" gap="xs">
        <Anchor href={url} download={artifact.data.name} data-testid="artifact-download">
          Download {artifact.data.name}
        </Anchor>
        <Text size="xs" c="dimmed">
          {(artifact.data.blob.size / 1024).toFixed(1)} KiB
        </Text>
      </Group>
    </>
  );
}
