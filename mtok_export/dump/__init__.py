"""Turn the IR (and a file's layout) into data for people and machines; printing is the CLI's."""
