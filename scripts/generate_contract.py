"""Write the JSON schema and the TypeScript declarations generated from placeviz/contract.py.

Run after changing the contract; tests/test_contract.py fails while the files differ from it.
"""

from __future__ import annotations

from placeviz.contract import generated_files

if __name__ == "__main__":
    for path, text in generated_files().items():
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        print(f"wrote {path}")
