import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { redactUrl } from "./request-log.js";

describe("redactUrl", () => {
  it("hides one-time link tokens and dnt_ secrets in the query, keeps everything else", () => {
    expect(redactUrl("/donor/demo/enter?token=dnt_dl_abc123")).toBe("/donor/demo/enter?token=[redacted]");
    expect(redactUrl("/admin/welcome?token=xyz&next=%2Fadmin")).toBe("/admin/welcome?token=[redacted]&next=%2Fadmin");
    expect(redactUrl("/x?a=1&key=dnt_at_secret&flag")).toBe("/x?a=1&key=[redacted]&flag");
    expect(redactUrl("/api/v1/checkouts/?limit=2&order=-create_date")).toBe(
      "/api/v1/checkouts/?limit=2&order=-create_date",
    );
    expect(redactUrl("/documents/receipt/1/sig")).toBe("/documents/receipt/1/sig");
  });

  it("never lets a token value through, whatever surrounds it", () => {
    const value = fc.stringMatching(/^[A-Za-z0-9_-]{8,40}$/);
    fc.assert(
      fc.property(
        fc.webPath(),
        value,
        fc.array(fc.tuple(fc.stringMatching(/^[a-z]{1,8}$/), value)),
        (path, secret, others) => {
          const pairs = [...others.map(([name, v]) => `${name}=${v}`), `token=${secret}`, `other=dnt_ss_${secret}`];
          const logged = redactUrl(`${path.split("?")[0]}?${pairs.join("&")}`);
          expect(logged).not.toContain(`token=${secret}`);
          expect(logged).not.toContain(`dnt_ss_${secret}`);
        },
      ),
    );
  });
});
