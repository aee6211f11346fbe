"""Checks a JSON file against a JSON Schema (python3-jsonschema, installed by scripts/install-deps).
Every *.schema.json of the source tree is known by its $id, so schemas can refer to each other offline.
Usage: check_json_schema.py SCHEMA FILE; exits 0 when the file is valid, 1 with the first error when not."""
import glob
import json
import os
import sys
import warnings

import jsonschema

warnings.simplefilter("ignore", DeprecationWarning)  # RefResolver: the one API both old and new versions have

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
store = {}
for path in glob.glob(os.path.join(root, "*", "*.schema.json")):
    with open(path) as f:
        known = json.load(f)
    store[known["$id"]] = known
with open(sys.argv[1]) as f:
    schema = json.load(f)
with open(sys.argv[2]) as f:
    document = json.load(f)
validator_class = jsonschema.validators.validator_for(schema)
validator_class.check_schema(schema)
resolver = jsonschema.RefResolver.from_schema(schema, store=store)
errors = sorted(validator_class(schema, resolver=resolver).iter_errors(document), key=lambda e: list(e.absolute_path))
if errors:
    e = errors[0]
    print(f"{sys.argv[2]}: {e.message} at /{'/'.join(str(p) for p in e.absolute_path)}", file=sys.stderr)
    sys.exit(1)
