// The console's actions on TanStack Query's useMutation: the busy state, the notice of success or failure and the
// queries to read again are said once, where the action is declared, instead of a busy/try/notify block per page.
import { useMutation, useQueryClient, type QueryKey } from "@tanstack/react-query";
import { notify } from "../ui/notify";

export type ActionOptions<Input, Output> = {
  run(input: Input): Promise<Output>;
  /** The green notice after success, its text or a title and text (none without it). */
  done?: (output: Output, input: Input) => string | { title: string; message: string };
  /** The red notice's title after a failure (the API's message is its text). */
  failed: string | ((input: Input) => string);
  /** A form's own place for a refusal (its fields' messages): given, the failure goes there instead of a notice. */
  shownAt?: (error: Error, input: Input) => void;
  /** What to read again after the action, whether it succeeded or not. */
  refresh: (input: Input) => readonly QueryKey[];
  onSuccess?: (output: Output, input: Input) => void;
};

export function useAction<Input, Output>(options: ActionOptions<Input, Output>) {
  const queryClient = useQueryClient();
  return useMutation<Output, Error, Input>({
    mutationFn: (input) => options.run(input),
    onSuccess: (output, input) => {
      const done = options.done?.(output, input);
      if (done) notify({ color: "green", ...(typeof done === "string" ? { message: done } : done) });
      options.onSuccess?.(output, input);
    },
    onError: (error, input) => {
      if (options.shownAt) return options.shownAt(error, input);
      notify({ color: "red", title: typeof options.failed === "string" ? options.failed : options.failed(input), message: error.message });
    },
    onSettled: (_output, _error, input) => Promise.all(options.refresh(input).map((queryKey) => queryClient.invalidateQueries({ queryKey }))),
  });
}
