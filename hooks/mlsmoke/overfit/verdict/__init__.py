"""The verdict side: probes that train again to tell causes apart, the diagnoses
(``diagnoses/``, one module per failure code) and checks (``checks/``, one module per
warning) that read the evidence, and the Result and report a user reads."""
