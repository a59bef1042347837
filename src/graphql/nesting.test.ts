import { describe, expect, it } from "vitest";
import { nestingOf } from "./graphql.routes.js";

describe("a GraphQL document's nesting, counted before it is parsed", () => {
  it("counts the brackets of selections, arguments and lists", () => {
    expect(nestingOf("")).toBe(0);
    expect(nestingOf("{ a }")).toBe(1);
    expect(nestingOf("{ a(tag: [[1]]) { b { c } } }")).toBe(4);
    expect(nestingOf(`{ d(tag: ${"[".repeat(5000)}${"]".repeat(5000)}) { e } }`)).toBe(5002);
  });

  it("does not count brackets in strings, block strings and comments", () => {
    expect(nestingOf('{ a(s: "[[[{{{(((") }')).toBe(2);
    expect(nestingOf('{ a(s: "\\"[[[") }')).toBe(2);
    expect(nestingOf('{ a(s: """ [[[ \\""" {{{ """) }')).toBe(2);
    expect(nestingOf("# [[[[[[\n{ a }")).toBe(1);
  });
});
