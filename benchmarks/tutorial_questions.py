"""Questions a reader of the Python tutorial asks, shared by the load benchmarks: each
caller draws from them so that most requests carry a new query (its embedding not
cached)."""

QUESTIONS = [
    "how do I loop over a range of numbers?",
    "what does the else clause on a for loop do?",
    "how do I define default argument values?",
    "how do I read a file line by line?",
    "what is a list comprehension?",
    "how do I handle an exception?",
    "how do I create a virtual environment?",
    "what are keyword arguments?",
    "how do I format a string with variables?",
    "how do I import a module from a package?",
    "what is the difference between a tuple and a list?",
    "how do I use a dictionary?",
]
