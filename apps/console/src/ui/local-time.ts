// Times in a datetime-local input: the person's local time, as the filters of the jobs list, the audit log and a
// webhook's deliveries show them.

/** ISO time → the value of a datetime-local input (local time), and back. */
export const toLocalInput = (iso?: string) => {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
export const fromLocalInput = (value: string) => (value ? new Date(value).toISOString() : undefined);
