"""The release check: the sdist and wheel built, installed as a user installs them."""
