import { Secret, TOTP } from "otpauth";

/**
 * An authenticator app, as a test uses it: codes of ever later time steps (the server takes each step
 * once, and none older than the last): the step before now, now, the step after; past that it waits.
 */
export class Authenticator {
  private last = 0;
  constructor(readonly secret: string) {}

  async code(): Promise<string> {
    for (;;) {
      const now = Math.floor(Date.now() / 30_000);
      const step = Math.max(this.last + 1, now - 1);
      if (step <= now + 1) {
        this.last = step;
        return this.codeOf(step);
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  /** A code that is right but of a step the server already took. */
  usedCode(): string {
    return this.codeOf(this.last);
  }

  private codeOf(step: number): string {
    return TOTP.generate({ secret: Secret.fromBase32(this.secret), timestamp: step * 30_000 + 1000 });
  }
}
