"""Checks a JSON file against a JSON Schema (python3-jsonschema, installed by scripts/install-deps).
Usage: check_json_schema.py SCHEMA FILE; exits 0 when the file is valid, 1 with the first error when not."""
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
document = json.load(open(sys.argv[2]))
jsonschema.validators.validator_for(schema).check_schema(schema)
try:
    jsonschema.validate(document, schema, cls=jsonschema.validators.validator_for(schema))
except jsonschema.ValidationError as e:
    print(f"{sys.argv[2]}: {e.message} at {'/'.join(str(p) for p in e.absolute_path)}", file=sys.stderr)
    sys.exit(1)
