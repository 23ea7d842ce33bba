from pas_cli.main import main

main()
