"""What happened: event kinds, the columnar recorder, traces and their exports."""
