"""Adapters: what a project already has, turned into what the gate trains.

One module per adapter, each recognising objects by their methods (never by importing
Lightning or any other library):

- ``batches``: a ``batch`` callable returning a DataLoader, any iterable of batches or
  a LightningDataModule; the gate draws the first batch, once per run.
- ``lightning_module``: a ``model`` callable returning a LightningModule; its loss is
  ``training_step(batch, 0)``.
- ``configure_optimizers``: every form ``configure_optimizers()`` may return, as one
  optimizer with its schedulers.
"""
