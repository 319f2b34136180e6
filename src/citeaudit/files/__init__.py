"""Files in and out: case files and other tools' files read, outputs written whole, exports."""
