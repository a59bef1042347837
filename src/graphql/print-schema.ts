import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { printedSchema } from "./schema.js";

// npm run graphql:print — rewrites the committed schema after a change to the GraphQL types.
writeFileSync(fileURLToPath(new URL("./schema.graphql", import.meta.url)), printedSchema());
