// A client of reqgate written against types generated from its OpenAPI document (openapi-typescript), sending
// its requests with openapi-fetch. gateway/openapi/tsclient_test.go generates openapi.d.ts from the document a
// running gateway serves, type-checks this file with tsc --strict and runs it with Node against that gateway.
// It uses only what the document promises: a key the document marks as required is read without a check, so
// tsc refuses this file if the document stops promising it.
//
// Environment: REQGATE_URL (the gateway), REQGATE_KEY, REQGATE_USER, REQGATE_PASSWORD. It prints one line per
// step, and "created <id>" for the record it creates (and deletes); it exits non-zero at the first surprise.
import createClient from "openapi-fetch";
import type { components, paths } from "./openapi.js";

type Schemas = components["schemas"];

const base = process.env.REQGATE_URL ?? "http://127.0.0.1:8080";
const key = process.env.REQGATE_KEY ?? "demo";
const credentials = `${process.env.REQGATE_USER ?? "demo"}:${process.env.REQGATE_PASSWORD ?? "demo"}`;
const headers = {
  Authorization: `Basic ${Buffer.from(credentials).toString("base64")}`,
  Accept: "application/json",
};

// openapi-fetch serializes an object parameter as deepObject (field_conditions[field_103]=2) unless told the
// style the document gives it: form, exploded (field_103=2).
const client = createClient<paths, "application/json">({
  baseUrl: base,
  headers,
  querySerializer: { object: { style: "form", explode: true } },
});
// A client left with openapi-fetch's defaults: every condition then goes as a q value.
const plain = createClient<paths, "application/json">({ baseUrl: base, headers });

function check(ok: boolean, what: string, got?: unknown): void {
  if (!ok) {
    throw new Error(`${what}${got === undefined ? "" : `: got ${JSON.stringify(got)}`}`);
  }
}

// text is the text of a record field's value: a plain value, or the label of a picklist choice.
function text(v: Schemas["record_value"]): string {
  if (v === null) {
    return "";
  }
  if (typeof v === "string") {
    return v;
  }
  return v["#text"] ?? "";
}

// fields maps the names of a record read's fields to the text of their values.
function fields(r: Schemas["requirement"]): Map<string, string> {
  return new Map(r.fields.field.map((f) => [f.name, text(f.value)]));
}

// write is the body of a create or update of a requirement.
function write(values: Record<string, string | number>): Schemas["requirement_write_document"] {
  return {
    requirement: { fields: { field: Object.entries(values).map(([name, value]) => ({ name, value })) } },
  };
}

async function read(id: number): Promise<Map<string, string>> {
  const { data, error, response } = await client.GET("/api2/{api_key}/re/{id}", {
    params: { path: { api_key: key, id } },
  });
  check(data !== undefined, `read requirement ${id}: status ${response.status}`, error);
  return fields(data!.requirement);
}

async function searchIds(
  c: typeof client,
  query: NonNullable<paths["/api2/{api_key}/re/search"]["get"]["parameters"]["query"]>,
): Promise<number[]> {
  const { data, error, response } = await c.GET("/api2/{api_key}/re/search", {
    params: { path: { api_key: key }, query },
  });
  check(data !== undefined, `search ${JSON.stringify(query)}: status ${response.status}`, error);
  const hits: Schemas["requirement_summary"][] = data!.search_results.requirement ?? [];
  for (const h of hits) {
    // Every key of a summary is there, typed: no optional chaining needed.
    check(h.id_prefix === "RE-" && h.created_time["@unit"] === "GMT Timestamp" && h.last_updated_time["#text"] > 1000000000,
      "a summary's keys", h);
  }
  return hits.map((h) => h.id);
}

async function main(): Promise<void> {
  // Read.
  const first = await read(1);
  check(first.get("id") === "1" && (first.get("field_101") ?? "").includes("CSV"), "read requirement 1", [...first]);
  const user = await client.GET("/api2/{api_key}/user/{id_or_email}", {
    params: { path: { api_key: key, id_or_email: "1" } },
  });
  const u = user.data;
  check(u !== undefined && "user" in u && u.user.email === "demo@reqgate.test" && u.user.status === "Active", "read user 1", u);
  console.log("read: requirement 1 and user 1");

  // Create.
  const before = Math.floor(Date.now() / 1000) - 1;
  const created = await client.POST("/api2/{api_key}/re", {
    params: { path: { api_key: key } },
    body: write({ field_101: "Made by a TypeScript client", field_103: 2 }),
  });
  check(created.response.status === 201, "create", created.error);
  const location = created.response.headers.get("Location") ?? "";
  const id = Number(location.slice(location.lastIndexOf("/") + 1));
  check(Number.isInteger(id) && id > 0, "Location of the new record", location);
  console.log(`created ${id}`);
  const made = await read(id);
  check(made.get("field_101") === "Made by a TypeScript client" && made.get("field_103") === "Accepted - Scheduled",
    "the created record", [...made]);

  // Update.
  const updated = await client.PUT("/api2/{api_key}/re/{id}", {
    params: { path: { api_key: key, id } },
    body: write({ field_101: "Renamed by a TypeScript client" }),
  });
  check(updated.response.status === 200, "update", updated.error);
  check((await read(id)).get("field_101") === "Renamed by a TypeScript client", "the updated record");
  console.log(`updated ${id}`);

  // Search: a picklist condition and a time range.
  const after = Math.floor(Date.now() / 1000) + 1;
  const range = [`last_updated_time>${before}`, `last_updated_time<${after}`];
  let ids = await searchIds(client, { field_conditions: { field_103: 2 }, q: range });
  check(ids.length === 1 && ids[0] === id, `search by field_103=2 and ${range.join(", ")}`, ids);
  ids = await searchIds(plain, { q: ["field_103=2", ...range] });
  check(ids.length === 1 && ids[0] === id, "the same search as q values alone, with openapi-fetch's defaults", ids);
  ids = await searchIds(client, { field_conditions: { field_103: 1 }, q: range });
  check(ids.length === 0, "search by another option", ids);
  ids = await searchIds(plain, { q: [`created_time>${after}`] });
  check(ids.length === 0, "search for records created later", ids);
  console.log(`searched: requirement ${id} by picklist and time range`);

  // An error in JSON: typed by the document (message always there).
  const bad = await plain.GET("/api2/{api_key}/re/search", {
    params: { path: { api_key: key }, query: { q: ["created_time>=1262493473"] } },
  });
  check(bad.response.status === 400 && bad.error !== undefined &&
    bad.error.error.message.includes("the operator >= is not supported"), "an invalid condition", bad.error);
  console.log(`error: ${bad.error!.error.message}`);

  // Delete, then delete again: 409 with its JSON error.
  const deleted = await client.DELETE("/api2/{api_key}/re/{id}", { params: { path: { api_key: key, id } } });
  check(deleted.response.status === 200, "delete", deleted.error);
  const again = await client.DELETE("/api2/{api_key}/re/{id}", { params: { path: { api_key: key, id } } });
  check(again.response.status === 409 && again.error !== undefined && again.error.error.message !== "",
    "delete again", again.error);
  const gone = await client.GET("/api2/{api_key}/re/{id}", { params: { path: { api_key: key, id } } });
  check(gone.response.status === 404 && gone.error !== undefined, "read the deleted record", gone.error);
  console.log(`deleted ${id}; again: ${again.error!.error.message}`);
  console.log("ok");
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
