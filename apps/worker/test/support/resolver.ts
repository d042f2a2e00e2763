// A DNS resolver for the SSRF guard's tests: it answers from a table the test may change as it goes (a name that
// moves to another address), fails like getaddrinfo for a name not in it, and records each name it was asked for.
import type { Resolver } from "@conveyor/net";

export function recordingResolver(answers: Record<string, string[]>): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (hostname: string) => {
    asked.push(hostname);
    const answer = answers[hostname];
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return answer;
  };
  return Object.assign(resolve, { asked });
}
