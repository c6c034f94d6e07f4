// Validates speedscope files against the schema speedscope itself ships
// (dist/release/file-format-schema.json), with ajv. Usage: node validate_speedscope.js FILE...
// Prints "speedscope: FILE is valid" per file; exits 1 on the first invalid one.
'use strict';
const fs = require('fs');
const path = require('path');
const Ajv = require('ajv');

const schemaPath = path.join(path.dirname(require.resolve('speedscope/package.json')),
                             'dist', 'release', 'file-format-schema.json');
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
delete schema.$schema;  // draft-07 is ajv 8's default; its meta-schema needs no fetching
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);
for (const file of process.argv.slice(2)) {
  const data = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (!validate(data)) {
    console.log(`speedscope: ${file} is invalid: ${ajv.errorsText(validate.errors)}`);
    process.exit(1);
  }
  console.log(`speedscope: ${file} is valid`);
}
