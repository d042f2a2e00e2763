// A cron expression in words ("Every 15 minutes, between 09:00 and 17:59, Monday through Friday"), beside the
// expression wherever one is shown. cronstrue reads the same five fields (and the names MON, JAN…) as the API's
// parser; an expression it cannot read gets no words (the API's own message says what is wrong with it).
import cronstrue from "cronstrue";

export function cronInWords(cron: string): string | null {
  if (!cron.trim()) return null;
  try {
    return cronstrue.toString(cron, { use24HourTimeFormat: true, throwExceptionOnParseError: true });
  } catch {
    return null;
  }
}
