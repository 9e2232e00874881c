"""Small programs run as subprocesses by the transport tests."""
