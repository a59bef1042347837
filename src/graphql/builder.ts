import SchemaBuilder from "@pothos/core";
import type { GraphQLContext } from "./context.js";

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  DefaultFieldNullability: false;
}>({
  defaultFieldNullability: false,
});

builder.queryType({ description: "Everything an organization can read" });
builder.mutationType({ description: "What an organization's admins and installed applications can do" });
