// Form errors the way the API reports them: each detail at its field (body paths such as `email` or
// `job.payload.to`), anything else above the form. Client-side checks use the API's own rules and words.
import { useState } from "react";
import { ApiError } from "../api";

export type FormErrors = { fields: Record<string, string>; form?: string };

/**
 * Splits an error into messages for `fields` (matched by path or its prefix) and one for the form. `byCode`
 * places a refusal without details at a field (e.g. `email_taken` at the email).
 */
export function formErrors(error: unknown, fields: readonly string[], byCode: Record<string, string> = {}): FormErrors {
  if (!(error instanceof ApiError)) return { fields: {}, form: error instanceof Error ? error.message : "Something went wrong." };
  const codeField = byCode[error.code];
  if (codeField) return { fields: { [codeField]: error.message } };
  const result: FormErrors = { fields: {} };
  const unplaced: string[] = [];
  for (const detail of error.details) {
    const path = detail.path.replace(/^body\./, "");
    const field = fields.find((f) => path === f || path.startsWith(`${f}.`));
    if (field && !result.fields[field]) result.fields[field] = path === field ? detail.message : `${path}: ${detail.message}`;
    else if (!field) unplaced.push(`${path}: ${detail.message}`);
  }
  if (!error.details.length || unplaced.length) result.form = unplaced.length ? `${error.message} ${unplaced.join("; ")}` : error.message;
  return result;
}

const PASSWORD_MIN_CHARACTERS = 15;
const PASSWORD_MAX_BYTES = 72;

/** docs/reference/tenants.md#authentication: 15 characters to 72 bytes (bcrypt's limit), as the API checks it. */
export function passwordProblem(password: string): string | undefined {
  if ([...password].length < PASSWORD_MIN_CHARACTERS) return `must be at least ${PASSWORD_MIN_CHARACTERS} characters long`;
  const bytes = new TextEncoder().encode(password).length;
  if (bytes > PASSWORD_MAX_BYTES) return `must be at most ${PASSWORD_MAX_BYTES} bytes long (it is ${bytes} bytes in UTF-8)`;
  return undefined;
}

export function emailProblem(email: string): string | undefined {
  const value = email.trim();
  if (!value) return "is required";
  if (value.length > 254 || !/^[^\s@]+@[^\s@]+$/.test(value)) return "must be a valid email";
  return undefined;
}

/** Removes undefined entries; an empty result means the form may be sent. */
export function problems(entries: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(entries).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/**
 * A form's values and its errors (client-side checks, or the API's through formErrors): `field(name)` hands a text
 * input its value, its onChange and its error.
 */
export function useFormFields<V extends Record<string, unknown>>(initial: V | (() => V)) {
  const [values, setValues] = useState<V>(initial);
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const field = (name: { [K in keyof V]: V[K] extends string ? K : never }[keyof V] & string) => ({
    value: values[name] as string,
    onChange: (event: { currentTarget: { value: string } }) => {
      // Read now: React clears the event's currentTarget once the handler returns, before the update runs.
      const { value } = event.currentTarget;
      setValues((current) => ({ ...current, [name]: value }));
    },
    error: errors.fields[name],
  });
  return { values, setValues, errors, setErrors, field };
}
