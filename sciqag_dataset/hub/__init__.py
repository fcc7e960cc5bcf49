"""What leaves the work directory: the `datasets` builder, the published parquet folder, exports in trainers'
formats, and uploads to the Hub."""
