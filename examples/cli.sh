# The kernel-attention command on a CSV file, after `npm install kernel-attention` (in a clone of this repository,
# run cli/kernel-attention.mjs on examples/load.csv instead). The package's example data has columns hour, load and
# site.
cp node_modules/kernel-attention/examples/load.csv .

# The bandwidth chosen by leave-one-out cross-validation, with every bandwidth tried and its score.
npx kernel-attention select-bandwidth load.csv --x hour --y load

# The fitted curve every 4 hours with a 95 % band, as JSON.
npx kernel-attention predict load.csv --x hour --y load --grid 7 --from 0 --to 24 --level 0.95 --format json

# A fixed bandwidth, written to a file; and a mistake in the data is reported as file:line:column.
npx kernel-attention fit load.csv --x hour --y load --bandwidth 1.5 --output model.json
npx kernel-attention fit load.csv --x hour --y site || echo "exit code $?"
