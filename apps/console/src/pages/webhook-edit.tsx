// Editing a webhook endpoint (owners and admins): its URL, events, description, and whether deliveries are sent.
// Only what changed is sent; the API's refusals (a URL the org already has, an address it will not call) show at
// their field, in words.
import { Modal, MultiSelect, Stack, Switch, Text, TextInput } from "@mantine/core";
import { useEffect, useState, type FormEvent } from "react";
import type { RequestBody, ResponseBody } from "@conveyor/client";
import { formErrors, problems, type FormErrors } from "../ui/form";
import { FormButtons } from "../ui/form-parts";
import { useAction } from "../data/actions";
import { endpointsRefresh, updateEndpoint } from "../data/webhooks";

type Endpoint = ResponseBody<"/webhook-endpoints", "get">[number];
export type EventType = RequestBody<"/webhook-endpoints", "post">["events"][number];
type Patch = RequestBody<"/webhook-endpoints/{id}", "patch">;

const urlProblem = (url: string) => (!url ? "is required" : /^https?:\/\/[^\s]+$/i.test(url) ? undefined : "must be an http(s) URL");

/** What an endpoint's form is refused for before it is sent: a URL that is no http(s) URL, no event type. */
export const endpointProblems = (values: { url: string; events: EventType[] }) =>
  problems({ url: urlProblem(values.url.trim()), events: values.events.length ? undefined : "needs at least one event type" });

type FieldValues = { url: string; events: EventType[]; description: string };

/** The URL, events and description fields, shared by the add and the edit dialogs. */
export function EndpointFields<V extends FieldValues>(props: {
  values: V;
  onChange(values: V): void;
  errors: FormErrors["fields"];
  eventTypes: EventType[];
  urlPlaceholder?: string;
}) {
  const { values, onChange, errors, eventTypes } = props;
  return (
    <>
      <TextInput
        label="URL"
        placeholder={props.urlPlaceholder}
        value={values.url}
        onChange={(e) => onChange({ ...values, url: e.currentTarget.value })}
        error={errors.url}
        data-autofocus
        required
      />
      <MultiSelect
        label="Events"
        data={eventTypes}
        value={values.events}
        onChange={(events) => onChange({ ...values, events: events.filter((e): e is EventType => eventTypes.includes(e as EventType)) })}
        error={errors.events}
        comboboxProps={{ withinPortal: true }}
      />
      <TextInput
        label="Description"
        value={values.description}
        onChange={(e) => onChange({ ...values, description: e.currentTarget.value })}
        error={errors.description}
      />
    </>
  );
}

type Values = { url: string; events: EventType[]; description: string; enabled: boolean };
const valuesOf = (endpoint: Endpoint): Values => ({
  url: endpoint.url,
  events: endpoint.events as EventType[],
  description: endpoint.description ?? "",
  enabled: endpoint.disabled_at === null,
});

export function EditEndpoint({ endpoint, eventTypes, onClose }: { endpoint: Endpoint | null; eventTypes: EventType[]; onClose(): void }) {
  const [values, setValues] = useState<Values | null>(null);
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const saving = useAction({
    run: updateEndpoint,
    done: () => ({ title: "Endpoint saved", message: "Deliveries use the new settings from now on." }),
    failed: "Could not save the endpoint",
    shownAt: (error) => setErrors(formErrors(error, ["url", "events", "description", "enabled"], { webhook_url_taken: "url" })),
    refresh: endpointsRefresh,
    onSuccess: () => onClose(),
  });
  useEffect(() => {
    setValues(endpoint ? valuesOf(endpoint) : null);
    setErrors({ fields: {} });
  }, [endpoint]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!endpoint || !values) return;
    const url = values.url.trim();
    const local = endpointProblems(values);
    setErrors({ fields: local });
    if (Object.keys(local).length) return;
    const was = valuesOf(endpoint);
    const patch: Patch = {
      ...(url !== was.url ? { url } : {}),
      ...(JSON.stringify([...values.events].sort()) !== JSON.stringify([...was.events].sort()) ? { events: values.events } : {}),
      ...(values.description.trim() !== was.description ? { description: values.description.trim() } : {}),
      ...(values.enabled !== was.enabled ? { enabled: values.enabled } : {}),
    };
    if (Object.keys(patch).length === 0) {
      onClose();
      return;
    }
    saving.mutate({ id: endpoint.id, patch });
  };

  return (
    <Modal opened={endpoint !== null} onClose={onClose} title="Edit webhook endpoint" centered>
      {values && endpoint && (
        <form onSubmit={submit} noValidate>
          <Stack>
            {errors.form && (
              <Text c="red.9" size="sm" role="alert">
                {errors.form}
              </Text>
            )}
            <EndpointFields values={values} onChange={(next) => setValues(next)} errors={errors.fields} eventTypes={eventTypes} />
            <Switch
              label="Send deliveries"
              description={
                endpoint.disabled_at
                  ? "Turned off now. Turning it on starts deliveries again, from the next event."
                  : "Turn off to pause deliveries to this endpoint."
              }
              checked={values.enabled}
              onChange={(e) => setValues({ ...values, enabled: e.currentTarget.checked })}
              error={errors.fields.enabled}
            />
            <FormButtons onCancel={onClose} busy={saving.isPending}>
              Save changes
            </FormButtons>
          </Stack>
        </form>
      )}
    </Modal>
  );
}
