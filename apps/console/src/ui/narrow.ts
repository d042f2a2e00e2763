// Whether the console is on a phone-sized screen (below Mantine's "sm" breakpoint, 48em), where pages keep the
// columns and controls that say what a thing is and fold the rest away.
import { useMediaQuery } from "@mantine/hooks";

export const NARROW_QUERY = "(max-width: 47.99em)";

/**
 * Read from the browser while the component first renders (there is no server rendering to agree with), so a page
 * is drawn once at its width: the hook's default answers `undefined` first and re-renders the whole page when its
 * effect reads the real value — a second full render of the shell and the page on every arrival.
 */
export function useNarrow(): boolean {
  return useMediaQuery(NARROW_QUERY, undefined, { getInitialValueInEffect: false });
}
