"""Scrapes a Prometheus `/metrics` endpoint and parses it with the Prometheus client library's
own parser (prometheus-client from PyPI), as a scraper would read it.

Usage: scrape.py URL. Prints one JSON object: each family's type and samples
([name, labels, value]); exits non-zero when the text does not parse or is not the
Prometheus text format.
"""

import json
import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families


def main() -> None:
    with urllib.request.urlopen(sys.argv[1], timeout=10) as answer:
        content_type = answer.headers.get("Content-Type", "")
        text = answer.read().decode("utf-8")
    if not content_type.startswith("text/plain"):
        sys.exit(f"not the Prometheus text format: Content-Type {content_type!r}")
    families = {}
    for family in text_string_to_metric_families(text):
        families[family.name] = {
            "type": family.type,
            "samples": [[s.name, s.labels, s.value] for s in family.samples],
        }
    print(json.dumps(families))


if __name__ == "__main__":
    main()
