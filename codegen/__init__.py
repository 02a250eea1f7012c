"""kafkawire's code generator.

Two steps, each a module with one job:

- ``importer``: reads Apache Kafka's comment-bearing JSON message definitions and writes
  ``schema-json/``: one strict JSON file per message, facts only, merged across the upstream
  snapshots after checking that every version two of them declare has the same wire layout;
- ``generator``: reads only ``schema-json/`` and writes ``src/kafkawire/messages/``.

``python -m codegen import|generate [--check]`` runs a step; ``make schema`` runs both.
"""
