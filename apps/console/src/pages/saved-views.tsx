// Saved views of the jobs list (issue 38): the person's own named filters (GET/POST/DELETE /saved-views), shown above
// the list's filters — a view applies its filters in one click, the current filters can be saved under a name, and a
// view is deleted after a confirmation. Views are the person's alone; nobody else in the organization sees them.
import { Alert, Button, CloseButton, Group, Modal, Paper, Stack, Text, TextInput } from "@mantine/core";
import { useState, type FormEvent } from "react";
import type { ResponseBody } from "@conveyor/client";
import { useAction } from "../data/actions";
import { deleteView, saveView, savedViewsKey, savedViewsRefresh, useSavedViews } from "../data/saved-views";
import { ConfirmAction, useConfirmedAction } from "../ui/confirm";
import { FormButtons } from "../ui/form-parts";
import { formErrors, type FormErrors } from "../ui/form";
import type { JobFilter } from "./job-search";

type SavedView = ResponseBody<"/saved-views", "get">[number];

/** The API's limit on a view's name. */
const NAME_MAX = 80;

/** The filters in a fixed order, so two filters with the same values compare equal whatever order they were written in. */
const filterText = (filter: Record<string, string | undefined>) =>
  JSON.stringify(
    Object.entries(filter)
      .filter(([, value]) => value !== undefined && value !== "")
      .sort(([a], [b]) => a.localeCompare(b)),
  );

export function SavedViews({ filter, onApply }: { filter: JobFilter; onApply(filter: JobFilter): void }) {
  const views = useSavedViews();
  const [saving, setSaving] = useState(false);
  const deleting = useConfirmedAction<SavedView>({
    queryKey: savedViewsKey,
    failed: "Could not delete the view",
    run: async (view) => {
      await deleteView(view.id);
      return `View “${view.name}” deleted.`;
    },
  });
  const current = filterText(filter);
  const hasFilter = current !== "[]";

  return (
    <Paper withBorder p="xs" component="section" aria-labelledby="saved-views-title">
      <Group gap="xs" align="center" wrap="wrap">
        <Text id="saved-views-title" size="sm" fw={600} component="h2" m={0}>
          Saved views
        </Text>
        {views.isPending ? (
          <Text size="sm" c="dimmed">
            Loading…
          </Text>
        ) : views.isError ? (
          <Text size="sm" c="red.9">
            Your views could not be loaded: {views.error.message}
          </Text>
        ) : views.data.length === 0 ? (
          // On a phone the box is one line (issue 48 #10: the first job card was below the first screen); the button says it.
          <Text size="sm" c="dimmed" visibleFrom="sm">
            None yet: set filters below, then save them to open the same list in one click.
          </Text>
        ) : (
          <Group component="ul" gap={6} p={0} m={0} aria-label="Your saved views" style={{ listStyle: "none" }}>
            {views.data.map((view) => {
              const applied = filterText(view.filter) === current;
              return (
                <Group component="li" key={view.id} gap={0} wrap="nowrap" data-saved-view={view.name}>
                  <Button
                    size="compact-sm"
                    variant={applied ? "filled" : "light"}
                    aria-pressed={applied}
                    onClick={() => onApply(view.filter as JobFilter)}
                    title={`Show the jobs list with this view's filters`}
                    styles={{
                      root: { borderTopRightRadius: 0, borderBottomRightRadius: 0, maxWidth: "16rem" },
                      label: { overflow: "hidden", textOverflow: "ellipsis" },
                    }}
                  >
                    {view.name}
                  </Button>
                  <CloseButton
                    size="md"
                    variant="light"
                    aria-label={`Delete view ${view.name}`}
                    onClick={() => deleting.ask(view)}
                    style={{ borderTopLeftRadius: 0, borderBottomLeftRadius: 0 }}
                  />
                </Group>
              );
            })}
          </Group>
        )}
        <Button size="compact-sm" variant="default" onClick={() => setSaving(true)} disabled={!hasFilter} title={hasFilter ? undefined : "Set a filter first"}>
          Save current filters…
        </Button>
      </Group>
      <SaveView opened={saving} filter={filter} onClose={() => setSaving(false)} />
      <ConfirmAction action={deleting} title="Delete this view?" confirmLabel="Delete view">
        “{deleting.target?.name}” is removed from your saved views. The jobs it shows are not touched.
      </ConfirmAction>
    </Paper>
  );
}

function SaveView({ opened, filter, onClose }: { opened: boolean; filter: JobFilter; onClose(): void }) {
  const [name, setName] = useState("");
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const saving = useAction({
    run: (name: string) => saveView({ name, filter }),
    done: (view) => `Saved the view “${view.name}”.`,
    failed: "Could not save the view",
    shownAt: (error) => setErrors(formErrors(error, ["name", "filter"], { saved_view_name_taken: "name" })),
    refresh: savedViewsRefresh,
    onSuccess: () => close(),
  });
  function close() {
    setName("");
    setErrors({ fields: {} });
    onClose();
  }
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const trimmed = name.trim();
    if (!trimmed || trimmed.length > NAME_MAX) return setErrors({ fields: { name: trimmed ? `must be at most ${NAME_MAX} characters long` : "is required" } });
    saving.mutate(trimmed);
  };
  return (
    <Modal opened={opened} onClose={close} title="Save these filters as a view" centered>
      <form onSubmit={submit} noValidate>
        <Stack>
          <Text size="sm" c="dimmed">
            Only you see your views. Filters: {describe(filter)}.
          </Text>
          {(errors.form || errors.fields.filter) && (
            <Alert color="red" title="Not saved">
              {errors.form ?? errors.fields.filter}
            </Alert>
          )}
          <TextInput
            label="Name"
            description="E.g. Failed webhooks this week."
            value={name}
            maxLength={NAME_MAX}
            onChange={(e) => setName(e.currentTarget.value)}
            error={errors.fields.name}
            data-autofocus
            required
          />
          <FormButtons onCancel={close} busy={saving.isPending}>
            Save view
          </FormButtons>
        </Stack>
      </form>
    </Modal>
  );
}

/** The filters as `name: value` pairs, for the save dialog. */
function describe(filter: JobFilter): string {
  return Object.entries(filter)
    .filter(([, value]) => value)
    .map(([name, value]) => `${name.replace(/_/g, " ")} ${String(value)}`)
    .join(", ");
}
