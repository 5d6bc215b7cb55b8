// node speedscope_schema_check.js SCHEMA FILE: validates FILE against speedscope's schema.
const fs = require('fs');
const Ajv = require('ajv');
const [schemaPath, filePath] = process.argv.slice(2);
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
const doc = JSON.parse(fs.readFileSync(filePath, 'utf8'));
const ajv = new Ajv({strict: false, allErrors: true});
const validate = ajv.compile(schema);
if (!validate(doc)) {
  console.log('FAIL: not a valid speedscope file:', JSON.stringify(validate.errors.slice(0, 5)));
  process.exit(1);
}
const events = doc.profiles.reduce((n, p) => n + p.events.length, 0);
console.log(`speedscope schema: valid (${doc.profiles.length} profiles, ${events} events)`);
