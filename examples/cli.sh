# The kernel-attention command on a CSV file (run from the package's folder; after `npm install kernel-attention`,
# write `npx kernel-attention`). examples/load.csv has columns hour, load and site.

# The bandwidth chosen by leave-one-out cross-validation, with every bandwidth tried and its score.
kernel-attention select-bandwidth examples/load.csv --x hour --y load

# The fitted curve every 4 hours with a 95 % band, as JSON.
kernel-attention predict examples/load.csv --x hour --y load --grid 7 --from 0 --to 24 --level 0.95 --format json

# A fixed bandwidth, written to a file; and a mistake in the data is reported as file:line:column.
kernel-attention fit examples/load.csv --x hour --y load --bandwidth 1.5 --output model.json
kernel-attention fit examples/load.csv --x hour --y site || echo "exit code $?"
