/** Prints the console's API types for an OpenAPI document file (the staleness test runs it). */
import { readFileSync } from 'node:fs';
import { schemaSourceOf } from './openapi-types';

schemaSourceOf(JSON.parse(readFileSync(process.argv[2], 'utf8')))
  .then((source) => process.stdout.write(source))
  .catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
