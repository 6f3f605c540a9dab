"""`make demo`: a short offline demonstration of ponder."""

from __future__ import annotations


def main() -> None:
    """Run the demo."""
    print("ponder demo: coming with the VM")


if __name__ == "__main__":
    main()
